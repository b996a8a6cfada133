#include "registry.h"

#include "failure.h"
#include "paths.h"
#include "sandbox_log.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace bw::rt {

namespace {

std::string record_path(const std::string& name)
{
    return std::string(kRegistryDir) + "/" + name;
}

std::optional<SandboxRecord> read_record(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    SandboxRecord r;
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos)
            continue;
        const auto key = line.substr(0, eq);
        const auto value = line.substr(eq + 1);
        if (key == "name")
            r.name = value;
        else if (key == "cgroup")
            r.cgroup = value;
        else if (key == "cgroup_id")
            r.cgroup_id = std::stoull(value);
        else if (key == "main_pid")
            r.main_pid = std::stoi(value);
        else if (key == "supervisor_pid")
            r.supervisor_pid = std::stoi(value);
        else if (key == "policy")
            r.policy = value;
        else if (key == "artifact")
            r.artifact = value;
        else if (key == "pin_dir")
            r.pin_dir = value;
        else if (key == "started")
            r.started = std::stoll(value);
        else if (key == "parent")
            r.parent = value;
        else if (key == "alias")
            r.aliases.push_back(value);
    }
    if (r.name.empty())
        return std::nullopt;
    return r;
}

} // namespace

namespace {

bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

} // namespace

bool valid_sandbox_name(const std::string& name)
{
    return !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
           std::all_of(name.begin(), name.end(), name_char);
}

std::string default_sandbox_name(const std::string& policy_name, int pid)
{
    const std::string suffix = "-" + std::to_string(pid);
    std::string name = policy_name.substr(0, 64 - suffix.size());
    std::replace_if(name.begin(), name.end(), [](char c) { return !name_char(c); }, '-');
    return (name.empty() ? "sandbox" : name) + suffix;
}

bool supervisor_alive(const SandboxRecord& r)
{
    return r.supervisor_pid > 0 && (::kill(r.supervisor_pid, 0) == 0 || errno == EPERM);
}

namespace {

void write_record(const SandboxRecord& r)
{
    const auto path = record_path(r.name);
    const auto tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << "name=" << r.name << "\ncgroup=" << r.cgroup << "\ncgroup_id=" << r.cgroup_id
            << "\nmain_pid=" << r.main_pid << "\nsupervisor_pid=" << r.supervisor_pid << "\npolicy=" << r.policy
            << "\nartifact=" << r.artifact << "\npin_dir=" << r.pin_dir << "\nstarted=" << r.started << "\n";
        if (!r.parent.empty())
            out << "parent=" << r.parent << "\n";
        for (const auto& alias : r.aliases)
            out << "alias=" << alias << "\n";
        if (!out.flush())
            fail_errno("cannot write " + tmp);
    }
    if (rename(tmp.c_str(), path.c_str()) != 0)
        fail_errno("cannot write " + path);
}

} // namespace

void ensure_name_free(const std::string& name)
{
    if (const auto old = read_record(record_path(name)); old && supervisor_alive(*old))
        throw Failure(fmt::format("a sandbox named `{}` is already running (bwrun pid {}); choose another "
                                  "--name",
                                  name, old->supervisor_pid));
}

void register_sandbox(const SandboxRecord& r)
{
    if (mkdir(kRegistryDir, 0700) != 0 && errno != EEXIST)
        fail_errno(std::string("cannot create ") + kRegistryDir);
    ensure_name_free(r.name);
    write_record(r);
}

void update_sandbox(const SandboxRecord& r)
{
    write_record(r);
}

void unregister_sandbox(const std::string& name, pid_t supervisor_pid)
{
    const auto path = record_path(name);
    if (const auto r = read_record(path); r && r->supervisor_pid == supervisor_pid) {
        unlink(path.c_str());
        remove_sandbox_files(name);
    }
}

void remove_sandbox_files(const std::string& name)
{
    unlink(live_policy_path(name).c_str());
    const auto log = sandbox_log_path(name);
    unlink(log.c_str());
    unlink((log + ".1").c_str());
}

std::string live_policy_path(const std::string& name)
{
    return std::string(kLiveDir) + "/" + name;
}

std::optional<SandboxRecord> find_sandbox(const std::string& name)
{
    if (!valid_sandbox_name(name))
        return std::nullopt;
    return read_record(record_path(name));
}

std::vector<SandboxRecord> list_sandboxes()
{
    std::vector<SandboxRecord> out;
    DIR* d = opendir(kRegistryDir);
    if (d == nullptr)
        return out;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (!valid_sandbox_name(name))
            continue;
        if (auto r = read_record(record_path(name)))
            out.push_back(std::move(*r));
    }
    closedir(d);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

} // namespace bw::rt
