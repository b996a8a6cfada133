#include "sandbox_log.h"

#include "failure.h"
#include "paths.h"

#include <cerrno>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace bw::rt {

std::string sandbox_log_path(const std::string& name)
{
    return std::string(kLogDir) + "/" + name;
}

SandboxLog::SandboxLog(std::string name) : name_(std::move(name))
{
    if (mkdir(kLogDir, 0700) != 0 && errno != EEXIST)
        fail_errno(std::string("cannot create ") + kLogDir);
    unlink((sandbox_log_path(name_) + ".1").c_str());
    open_fresh();
}

SandboxLog::~SandboxLog()
{
    if (file_ != nullptr)
        std::fclose(file_);
}

void SandboxLog::open_fresh()
{
    const auto path = sandbox_log_path(name_);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (file_ = fdopen(fd, "w")) == nullptr) {
        const int err = errno;
        if (fd >= 0)
            close(fd);
        fail_errno("cannot create " + path, err);
    }
    bytes_ = 0;
}

void SandboxLog::append(const std::string& json)
{
    if (file_ == nullptr)
        return;
    const auto line = fmt::format(R"({},"denials":{},"recorded":{},"dropped":{}}})", json, denials_, recorded_,
                                  dropped_);
    if (bytes_ + line.size() + 1 > kMaxBytes) {
        // The newer half is what `bwctl log` shows first; the older stays one file back.
        std::fclose(file_);
        file_ = nullptr;
        const auto path = sandbox_log_path(name_);
        rename(path.c_str(), (path + ".1").c_str());
        open_fresh();
    }
    std::fprintf(file_, "%s\n", line.c_str());
    std::fflush(file_);
    bytes_ += line.size() + 1;
}

void SandboxLog::remove()
{
    if (file_ != nullptr)
        std::fclose(file_);
    file_ = nullptr;
    const auto path = sandbox_log_path(name_);
    unlink(path.c_str());
    unlink((path + ".1").c_str());
}

std::optional<std::string> json_field(const std::string& line, const std::string& key)
{
    // Our own lines: one flat object of strings and numbers.
    std::size_t i = 0;
    auto skip_space = [&] {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
    };
    auto string_at = [&](std::string& out) {
        if (i >= line.size() || line[i] != '"')
            return false;
        for (++i; i < line.size() && line[i] != '"'; ++i) {
            if (line[i] != '\\') {
                out += line[i];
                continue;
            }
            if (++i >= line.size())
                return false;
            if (line[i] == 'u' && i + 4 < line.size()) {
                out += static_cast<char>(std::stoi(line.substr(i + 1, 4), nullptr, 16));
                i += 4;
            } else {
                out += line[i] == 'n' ? '\n' : line[i] == 't' ? '\t' : line[i];
            }
        }
        return i++ < line.size();
    };
    skip_space();
    if (i >= line.size() || line[i++] != '{')
        return std::nullopt;
    for (;;) {
        skip_space();
        std::string k, value;
        if (!string_at(k))
            return std::nullopt;
        skip_space();
        if (i >= line.size() || line[i++] != ':')
            return std::nullopt;
        skip_space();
        if (i < line.size() && line[i] == '"') {
            if (!string_at(value))
                return std::nullopt;
        } else {
            while (i < line.size() && line[i] != ',' && line[i] != '}')
                value += line[i++];
        }
        if (k == key)
            return value;
        skip_space();
        if (i >= line.size() || line[i++] != ',')
            return std::nullopt;
    }
}

std::optional<LogTotals> read_log_totals(const std::string& name)
{
    const int fd = open(sandbox_log_path(name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    // The last line is within the last lines' worth of bytes.
    std::vector<char> tail(16384);
    const off_t size = lseek(fd, 0, SEEK_END);
    const off_t from = size > static_cast<off_t>(tail.size()) ? size - static_cast<off_t>(tail.size()) : 0;
    const ssize_t n = pread(fd, tail.data(), tail.size(), from);
    close(fd);
    if (n <= 0)
        return LogTotals{};
    std::string text(tail.data(), static_cast<std::size_t>(n));
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    const auto last = text.substr(text.rfind('\n') + 1);
    LogTotals t;
    if (const auto d = json_field(last, "denials"))
        t.denials = std::stoull(*d);
    if (const auto d = json_field(last, "dropped"))
        t.dropped = std::stoull(*d);
    return t;
}

} // namespace bw::rt
