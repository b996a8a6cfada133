#include "driver/driver.h"

#include "artifact/artifact.h"
#include "check/check.h"
#include "version.h"
#include "lower/lower.h"
#include "parse/parse.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace bw {

namespace {

std::optional<FileId> run_load(const std::string& path, Compilation& c)
{
    struct stat st{};
    if (stat(path.c_str(), &st) != 0) {
        c.diags.report(DiagKind::FileUnreadable, SourceLocation{}, path, std::strerror(errno));
        return std::nullopt;
    }
    if (S_ISDIR(st.st_mode)) {
        c.diags.report(DiagKind::FileUnreadable, SourceLocation{}, path, "it is a directory");
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        c.diags.report(DiagKind::FileUnreadable, SourceLocation{}, path, std::strerror(errno));
        return std::nullopt;
    }
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxSourceBytes) {
            c.diags.report(DiagKind::FileUnreadable, SourceLocation{}, path,
                           fmt::format("it is larger than {} MiB", kMaxSourceBytes >> 20));
            return std::nullopt;
        }
    }
    return c.sources.add(path, std::move(text));
}

std::string dump_ast(const ast::Module& m)
{
    std::string out;
    for (const auto& p : m.policies) {
        out += fmt::format("policy {:?} @{}:{}\n", p.name, p.loc.line, p.loc.column);
        for (const auto& d : p.defaults)
            out += fmt::format("  default {} @{}:{}\n", ast::to_string(d.action), d.loc.line, d.loc.column);
        for (const auto& r : p.rules)
            out += fmt::format("  {} {:?} @{}:{}\n", ast::to_string(r.action), r.pattern, r.loc.line,
                               r.loc.column);
    }
    return out;
}

} // namespace

std::optional<ir::Policy> run_frontend(const std::string& path, Compilation& c, Emit emit, std::string& dump)
{
    const auto file = run_load(path, c);
    if (!file)
        return std::nullopt;
    const auto module = run_parse(c.sources.file(*file), c.diags);
    if (!module)
        return std::nullopt;
    if (emit == Emit::Ast) {
        dump = dump_ast(*module);
        return std::nullopt;
    }
    const auto checked = run_check(*module, c.diags);
    if (!checked)
        return std::nullopt;
    auto policy = run_lower(*checked, c.sources);
    if (emit == Emit::Ir) {
        dump = ir::dump(policy);
        return std::nullopt;
    }
    return policy;
}

std::optional<Compiled> run_pipeline(const std::string& path, Compilation& c, Emit emit, std::string& dump)
{
    auto policy = run_frontend(path, c, emit, dump);
    if (!policy)
        return std::nullopt;
    auto automaton = run_compile_paths(*policy, c.diags);
    if (!automaton)
        return std::nullopt;
    if (emit == Emit::Automata) {
        dump = bw::dump(*automaton);
        return std::nullopt;
    }
    auto tables = run_backend_maps(*policy, *automaton);
    if (emit == Emit::Maps) {
        dump = bw::dump(tables);
        return std::nullopt;
    }
    return Compiled{std::move(*policy), std::move(*automaton), std::move(tables)};
}

bool run_write_artifact(const Compiled& compiled, const std::string& output, std::span<const std::byte> program,
                        Compilation& c)
{
    const auto data = artifact::make_policy_data(compiled.policy, compiled.tables, BW_VERSION_STRING);
    const auto written = artifact::write(output, program, data);
    if (const auto* e = std::get_if<artifact::Error>(&written)) {
        c.diags.report(DiagKind::OutputWriteFailed, SourceLocation{}, output, e->message);
        return false;
    }
    return true;
}

} // namespace bw
