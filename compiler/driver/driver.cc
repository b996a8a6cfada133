#include "driver/driver.h"

#include "artifact/artifact.h"
#include "backend_c/backend_c.h"
#include "format/format.h"
#include "lint/lint.h"
#include "lower/lower.h"
#include "net/net.h"
#include "seccomp/seccomp.h"
#include "syscall_bitmap/syscall_bitmap.h"
#include "version.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

namespace bw {

namespace {

std::string dump_ast(const ast::Program& program, const SourceManager& sources)
{
    std::string out;
    for (const auto& unit : program.units) {
        out += fmt::format("file {:?}: policy {:?}, {} statements\n", sources.file(unit.file).name, unit.policy->name,
                           unit.policy->body.size());
        for (const auto& s : unit.policy->body) {
            std::visit(
                [&](const auto& node) {
                    out += fmt::format("  {}:{}: {}\n", node.loc.line, node.loc.column, sources.slice(node.loc));
                },
                s.node);
        }
    }
    return out;
}

// Both architectures' filters, or none when the policy says nothing about syscalls.
std::optional<std::vector<artifact::SeccompFilter>> compile_seccomp(const ir::Policy& policy, Diagnostics& diags)
{
    std::vector<artifact::SeccompFilter> filters;
    if (!has_syscall_rules(policy))
        return filters;
    for (const auto arch : {SeccompArch::X86_64, SeccompArch::Aarch64}) {
        auto program = run_compile_seccomp(policy, arch, diags);
        if (!program)
            return std::nullopt;
        filters.push_back({audit_arch(arch), std::move(program->code)});
    }
    return filters;
}

} // namespace

std::vector<std::string> default_library_dirs()
{
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("BWC_PATH")) {
        std::stringstream in(path);
        std::string dir;
        while (std::getline(in, dir, ':')) {
            if (!dir.empty())
                dirs.push_back(dir);
        }
    }
    // Installed, the library is in the same prefix as the running program (PREFIX/bin/bwc),
    // wherever that prefix is: a .deb puts it in /usr whatever prefix the build was given.
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto beside = (exe.parent_path().parent_path() / "share/bumblewrap/stdlib-policies").string();
    if (!ec && beside != BW_INSTALLED_STDLIB_DIR)
        dirs.push_back(beside);
    dirs.emplace_back(BW_INSTALLED_STDLIB_DIR);
    dirs.emplace_back(BW_SOURCE_STDLIB_DIR);
    return dirs;
}

PipelineOptions default_options()
{
    PipelineOptions o;
    o.resolve.library_dirs = default_library_dirs();
    o.check.bindings = environment_bindings();
    return o;
}

std::optional<ir::Policy> run_frontend(FileId main, Compilation& c, const PipelineOptions& options, std::string& dump)
{
    const auto program = run_resolve(main, c.sources, c.diags, options.resolve);
    if (!program)
        return std::nullopt;
    if (options.emit == Emit::Ast) {
        dump = dump_ast(*program, c.sources);
        return std::nullopt;
    }
    auto checked = run_check(*program, c.sources, options.check, c.diags);
    if (!checked)
        return std::nullopt;
    auto policy = run_lower(std::move(*checked), c.diags);
    run_lint(policy, c.diags);
    if (options.emit == Emit::Ir) {
        dump = ir::dump(policy);
        return std::nullopt;
    }
    return policy;
}

std::optional<Compiled> run_pipeline(const std::string& path, Compilation& c, const PipelineOptions& options,
                                     std::string& dump)
{
    const auto file = load_file(path, c.sources, c.diags);
    if (!file)
        return std::nullopt;
    auto policy = run_frontend(*file, c, options, dump);
    if (!policy)
        return std::nullopt;
    if (options.emit == Emit::Seccomp) {
        for (const auto arch : {syscalls::Arch::X86_64, syscalls::Arch::Aarch64})
            dump += bw::dump(run_compile_syscall_bitmap(*policy, arch));
        for (const auto arch : {SeccompArch::X86_64, SeccompArch::Aarch64}) {
            const auto program = run_compile_seccomp(*policy, arch, c.diags);
            if (!program)
                return std::nullopt;
            dump += disassemble(*program);
        }
        return std::nullopt;
    }
    auto seccomp = compile_seccomp(*policy, c.diags);
    if (!seccomp)
        return std::nullopt;
    auto automaton = run_compile_paths(*policy, c.diags);
    if (!automaton)
        return std::nullopt;
    if (options.emit == Emit::Automata) {
        dump = bw::dump(*automaton);
        return std::nullopt;
    }
    if (options.backend == artifact::Backend::Maps) {
        auto tables = run_backend_maps(*policy, *automaton);
        if (options.emit == Emit::Maps) {
            dump = bw::dump(tables);
            return std::nullopt;
        }
        std::vector<std::byte> program(embedded::generic_bpf.begin(), embedded::generic_bpf.end());
        return Compiled{std::move(*policy), std::move(*automaton), options.backend, std::move(tables),
                        std::move(program), kernel_requirements(), std::move(*seccomp)};
    }
    auto specialised = run_backend_c(*policy, *automaton);
    if (options.emit == Emit::Maps || options.emit == Emit::C) {
        dump = options.emit == Emit::C ? bw::dump(specialised) : bw::dump(specialised.tables);
        return std::nullopt;
    }
    auto object = run_compile_c(specialised, c.diags);
    if (!object)
        return std::nullopt;
    auto kernel = kernel_requirements(specialised);
    return Compiled{std::move(*policy), std::move(*automaton), options.backend, std::move(specialised.tables),
                    std::move(*object), std::move(kernel), std::move(*seccomp)};
}

std::optional<ir::Policy> run_rule_frontend(const std::string& rule, const std::string& name, Compilation& c)
{
    // A policy needs a default; the rule's meaning does not depend on it.
    const auto file = c.sources.add(name, fmt::format("policy \"bwctl\" {{ {} default deny }}\n", rule));
    std::string dump;
    auto policy = run_frontend(file, c, default_options(), dump);
    if (!policy || c.diags.has_errors())
        return std::nullopt;
    return policy;
}

namespace {

// Every policy of the standard library, by the name `include` gives it: the first folder
// that has a name wins, as for includes.
std::vector<learn::Library> standard_library(Compilation& c)
{
    std::vector<learn::Library> out;
    std::set<std::string> seen;
    for (const auto& dir : default_library_dirs()) {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            const auto path = entry.path();
            if (path.extension() != ".bwp" || !seen.insert(path.stem().string()).second)
                continue;
            std::string dump;
            if (const auto file = load_file(path.string(), c.sources, c.diags)) {
                if (auto policy = run_frontend(*file, c, default_options(), dump))
                    out.push_back({path.stem().string(), std::move(*policy)});
            }
        }
    }
    return out;
}

} // namespace

std::optional<std::string> run_learn_pipeline(const learn::Recording& recording, const std::string& name,
                                              const std::string& out, Compilation& c)
{
    auto library = standard_library(c);
    const auto secrets =
        std::find_if(library.begin(), library.end(), [](const auto& l) { return l.name == "deny-secrets"; });
    std::optional<learn::Library> secrets_layer;
    if (secrets != library.end()) {
        secrets_layer = std::move(*secrets);
        library.erase(secrets);
    }
    auto draft = learn::run_learn(recording, library, secrets_layer ? &*secrets_layer : nullptr, name);
    // A broader rule or an include may still decide a recorded path otherwise (a deny of
    // the library's, a more specific rule): exact rules then, checked again.
    for (int round = 0;; ++round) {
        const auto text = learn::render(draft);
        Compilation attempt;
        const auto file = attempt.sources.add(out, text);
        std::string dump;
        const auto policy = run_frontend(file, attempt, default_options(), dump);
        if (!policy) {
            attempt.diags.print(stderr, false);
            return std::nullopt;
        }
        std::map<std::string, ir::AccessMask> denied;
        for (const auto& [path, kinds] : recording.paths) {
            for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
                const auto access = static_cast<ir::Access>(k);
                if ((kinds & ir::bit(access)) != 0 &&
                    ir::evaluate(*policy, {access, path, "", 0, 0, false, 0}).decision != ir::Decision::Allow)
                    denied[path] |= ir::bit(access);
            }
        }
        // Socket operations have exact rules, and no include that denies one.
        for (const auto& [use, times] : recording.sockets) {
            if (ir::evaluate_net(*policy, learn::net_query(use)).decision != ir::Decision::Allow) {
                std::fprintf(stderr, "bwc: the learned policy denies a recorded socket operation of family %s (a "
                                     "bug: please report it with the recording)\n",
                             family_name(use.family).c_str());
                return std::nullopt;
            }
        }
        if (denied.empty() || round == 2) {
            const auto formatted = run_format(attempt.sources.file(file), attempt.diags);
            if (!formatted)
                attempt.diags.print(stderr, false);
            return formatted;
        }
        learn::add_exact(draft, denied);
    }
}

bool run_write_artifact(const Compiled& compiled, const std::string& output, Compilation& c)
{
    auto data = artifact::make_policy_data(compiled.policy, c.sources, compiled.backend, compiled.tables,
                                           compiled.kernel, BW_VERSION_STRING);
    data.seccomp = compiled.seccomp;
    const auto written = artifact::write(output, compiled.program, data);
    if (const auto* e = std::get_if<artifact::Error>(&written)) {
        c.diags.report(DiagKind::OutputWriteFailed, SourceLocation{}, output, e->message);
        return false;
    }
    return true;
}

} // namespace bw
