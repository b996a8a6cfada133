#include "resolve/resolve.h"

#include "parse/parse.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace bw {

namespace fs = std::filesystem;

namespace {

std::string canonical(const std::string& path)
{
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

std::string folder_of(const std::string& path)
{
    const auto parent = fs::path(path).parent_path();
    return parent.empty() ? "." : parent.string();
}

class Resolver {
public:
    Resolver(SourceManager& sources, Diagnostics& diags, const ResolveOptions& options, ast::Program& program)
        : sources_(sources), diags_(diags), options_(options), program_(program)
    {
    }

    // Parses `file` and follows its includes, depth first. `chain` holds the canonical
    // paths being resolved, to find cycles.
    bool visit(FileId file, std::vector<SourceLocation> included_at)
    {
        const auto& source = sources_.file(file);
        auto module = run_parse(source, diags_);
        if (!module)
            return false;
        if (!check_one_policy(*module))
            return false;
        program_.modules.push_back(std::move(*module));
        const auto& policy = program_.modules.back().policies.front();
        program_.units.push_back(ast::Unit{&policy, file, included_at});
        const auto unit_index = program_.units.size() - 1;

        const std::string path = canonical(source.name);
        chain_.push_back(path);
        seen_[path] = file;
        bool ok = true;
        for (const auto& statement : policy.body) {
            const auto* include = std::get_if<ast::Include>(&statement.node);
            if (include == nullptr)
                continue;
            const auto target = locate(*include, source.name, program_.units[unit_index]);
            if (!target) {
                ok = false;
                continue;
            }
            const std::string target_path = canonical(*target);
            if (std::find(chain_.begin(), chain_.end(), target_path) != chain_.end()) {
                report_cycle(*include, target_path, program_.units[unit_index]);
                ok = false;
                continue;
            }
            if (seen_.contains(target_path))
                continue; // already part of the program (a diamond, not a cycle)
            // One that failed to load or parse is read, kept and reported once, however often
            // it is included: 16 MiB read per `include` line would exhaust memory.
            if (!attempted_.insert(target_path).second) {
                ok = false;
                continue;
            }
            const auto loaded = load_file(*target, sources_, diags_, include->target.loc);
            if (!loaded) {
                ok = false;
                continue;
            }
            auto chain = program_.units[unit_index].included_at;
            chain.push_back(include->loc);
            ok = visit(*loaded, std::move(chain)) && ok;
        }
        chain_.pop_back();
        return ok;
    }

private:
    bool check_one_policy(const ast::Module& module)
    {
        if (module.policies.empty()) {
            diags_.report(DiagKind::NoPolicy, SourceLocation{module.file, 1, 1, 0})
                .hints.push_back("start the file with `policy \"name\" { default deny ... }`");
            return false;
        }
        for (std::size_t i = 1; i < module.policies.size(); ++i)
            diags_.report(DiagKind::ExtraPolicy, module.policies[i].name_loc, module.policies[i].name)
                .hints.push_back("put each policy in a file of its own, and `include` one from the other");
        return module.policies.size() == 1;
    }

    std::optional<std::string> locate(const ast::Include& include, const std::string& includer, const ast::Unit& unit)
    {
        const std::string& name = include.target.value;
        std::vector<std::string> candidates;
        if (name.empty()) {
            diags_.report(DiagKind::IncludeNotFound, include.target.loc, name, "an empty name");
            return std::nullopt;
        }
        if (name.find('/') != std::string::npos || name.ends_with(".bwp")) {
            // A file: relative to the includer's folder.
            candidates.push_back(name.front() == '/' ? name : folder_of(includer) + "/" + name);
        } else {
            // A library name: the includer's folder first, so that a project can override.
            candidates.push_back(folder_of(includer) + "/" + name + ".bwp");
            for (const auto& dir : options_.library_dirs)
                candidates.push_back(dir + "/" + name + ".bwp");
        }
        for (const auto& c : candidates) {
            struct stat st{};
            if (stat(c.c_str(), &st) == 0 && S_ISREG(st.st_mode))
                return c;
        }
        std::string searched;
        for (const auto& c : candidates)
            searched += (searched.empty() ? "" : ", ") + c;
        auto& d = diags_.report(DiagKind::IncludeNotFound, include.target.loc, name, "no such policy");
        d.hints.push_back("searched " + searched);
        for (auto& h : include_chain_hints(unit, sources_))
            d.hints.push_back(std::move(h));
        return std::nullopt;
    }

    void report_cycle(const ast::Include& include, const std::string& target, const ast::Unit& unit)
    {
        std::string cycle;
        bool in_cycle = false;
        for (const auto& p : chain_) {
            in_cycle = in_cycle || p == target;
            if (in_cycle)
                cycle += fs::path(p).filename().string() + " -> ";
        }
        cycle += fs::path(target).filename().string();
        auto& d = diags_.report(DiagKind::IncludeCycle, include.target.loc, cycle);
        d.hints.emplace_back("remove one of these includes; a policy's rules do not depend on include order");
        for (auto& h : include_chain_hints(unit, sources_))
            d.hints.push_back(std::move(h));
    }

    SourceManager& sources_;
    Diagnostics& diags_;
    const ResolveOptions& options_;
    ast::Program& program_;
    std::vector<std::string> chain_;
    std::map<std::string, FileId> seen_;
    std::set<std::string> attempted_; // every file loaded, including those that failed
};

} // namespace

std::optional<FileId> load_file(const std::string& path, SourceManager& sources, Diagnostics& diags,
                                SourceLocation from)
{
    struct stat st{};
    if (stat(path.c_str(), &st) != 0) {
        diags.report(DiagKind::FileUnreadable, from, path, std::strerror(errno));
        return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) {
        diags.report(DiagKind::FileUnreadable, from, path, S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
        return std::nullopt;
    }
    // Non-blocking: some regular files block their reader until there is news (`/proc/kmsg`),
    // which would hang the compiler on `include "/proc/kmsg"`.
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        diags.report(DiagKind::FileUnreadable, from, path, std::strerror(errno));
        return std::nullopt;
    }
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || text.size() + static_cast<std::size_t>(n) > kMaxSourceBytes) {
            diags.report(DiagKind::FileUnreadable, from, path,
                         n < 0 ? std::string(std::strerror(errno))
                               : fmt::format("it is larger than {} MiB", kMaxSourceBytes >> 20));
            close(fd);
            return std::nullopt;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    return sources.add(path, std::move(text));
}

std::optional<ast::Program> run_resolve(FileId main, SourceManager& sources, Diagnostics& diags,
                                        const ResolveOptions& options)
{
    ast::Program program;
    Resolver resolver(sources, diags, options, program);
    if (!resolver.visit(main, {}) || diags.has_errors())
        return std::nullopt;
    return program;
}

std::vector<std::string> include_chain_hints(const ast::Unit& unit, const SourceManager& sources)
{
    std::vector<std::string> out;
    for (auto it = unit.included_at.rbegin(); it != unit.included_at.rend(); ++it)
        out.push_back(fmt::format("included from {}:{}", sources.file(it->file).name, it->line));
    return out;
}

} // namespace bw
