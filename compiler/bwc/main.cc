// bwc: compiles .bwp policies into policy.o, checks them for CI, inspects artifacts.
#include "artifact/artifact.h"
#include "driver/driver.h"
#include "version.h"

#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace bw::embedded {
extern const std::span<const std::byte> generic_bpf;
}

namespace {

using namespace bw;

constexpr int kExitOk = 0;
constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;

void usage(std::FILE* out)
{
    std::fputs("usage: bwc POLICY.bwp -o POLICY.o [--emit=ast|ir|automata|maps]\n"
               "       bwc check [-Werror] POLICY.bwp...\n"
               "       bwc inspect POLICY.o\n"
               "       bwc --version\n"
               "\n"
               "Exit status: 0 success, 1 the policy has errors, 2 usage error.\n",
               out);
}

int usage_error(const std::string& message)
{
    std::fprintf(stderr, "bwc: %s\n", message.c_str());
    usage(stderr);
    return kExitUsage;
}

bool stderr_color()
{
    return isatty(STDERR_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

std::optional<Emit> parse_emit(std::string_view v)
{
    if (v == "ast")
        return Emit::Ast;
    if (v == "ir")
        return Emit::Ir;
    if (v == "automata")
        return Emit::Automata;
    if (v == "maps")
        return Emit::Maps;
    return std::nullopt;
}

int cmd_compile(std::span<char*> args)
{
    std::string input, output;
    Emit emit = Emit::None;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "-o") {
            if (i + 1 >= args.size())
                return usage_error("-o needs a file name");
            output = args[++i];
        } else if (a.starts_with("--emit=")) {
            const auto e = parse_emit(a.substr(7));
            if (!e)
                return usage_error(fmt::format("unknown stage `{}` for --emit", a.substr(7)));
            emit = *e;
        } else if (a.starts_with("-") && a != "-") {
            return usage_error(fmt::format("unknown option `{}`", a));
        } else if (input.empty()) {
            input = a;
        } else {
            return usage_error("give one policy file to compile (use `bwc check` for several)");
        }
    }
    if (input.empty())
        return usage_error("no policy file given");
    if (output.empty() && emit == Emit::None)
        return usage_error("no output file given (-o POLICY.o)");

    Compilation c;
    std::string dump;
    const auto compiled = run_pipeline(input, c, emit, dump);
    c.diags.print(stderr, stderr_color());
    if (c.diags.has_errors())
        return kExitErrors;
    if (emit != Emit::None) {
        std::fputs(dump.c_str(), stdout);
        return kExitOk;
    }
    if (!run_write_artifact(*compiled, output, embedded::generic_bpf, c)) {
        c.diags.print(stderr, stderr_color());
        return kExitErrors;
    }
    return kExitOk;
}

int cmd_check(std::span<char*> args)
{
    bool werror = false;
    std::vector<std::string> files;
    for (const std::string_view a : args) {
        if (a == "-Werror")
            werror = true;
        else if (a.starts_with("-"))
            return usage_error(fmt::format("unknown option `{}` for check", a));
        else
            files.emplace_back(a);
    }
    if (files.empty())
        return usage_error("no policy file given to check");
    bool failed = false;
    for (const auto& f : files) {
        Compilation c;
        std::string dump;
        run_pipeline(f, c, Emit::None, dump);
        c.diags.print(stderr, stderr_color());
        failed |= c.diags.has_errors() || (werror && c.diags.warning_count() > 0);
    }
    return failed ? kExitErrors : kExitOk;
}

int cmd_inspect(std::span<char*> args)
{
    if (args.size() != 1)
        return usage_error("inspect takes one artifact");
    const auto read = artifact::read(args[0]);
    if (const auto* e = std::get_if<artifact::Error>(&read)) {
        std::fprintf(stderr, "bwc: %s\n", e->message.c_str());
        return kExitErrors;
    }
    const auto& p = std::get<artifact::Artifact>(read).policy;
    std::printf("policy:          %s\n", p.policy_name.c_str());
    std::printf("format version:  %u\n", p.format_version);
    std::printf("BPF ABI:         %u\n", p.abi_version);
    std::printf("compiled by:     bwc %s\n", p.bwc_version.c_str());
    for (const auto& f : p.source_files)
        std::printf("source:          %s\n", f.c_str());
    std::printf("backend:         maps (generic program)\n");
    std::printf("kernel features: BPF LSM (file_open), cgroup v2\n");
    std::printf("automaton:       %u states, %u byte classes, %zu transitions\n", p.tables.sandbox.nstates,
                p.tables.sandbox.nclasses, p.tables.trans.size());
    std::printf("rules:\n");
    for (const auto& r : p.rules)
        std::printf("  #%-4u %s:%u: %s\n", r.id, r.file.c_str(), r.line, r.text.c_str());
    return kExitOk;
}

} // namespace

int main(int argc, char** argv)
{
    std::span<char*> args(argv + 1, static_cast<std::size_t>(argc - 1));
    if (args.empty())
        return usage_error("nothing to do");
    const std::string_view first = args[0];
    if (first == "--version") {
        std::printf("bwc %s\n", BW_VERSION_STRING);
        return kExitOk;
    }
    if (first == "--help" || first == "-h") {
        usage(stdout);
        return kExitOk;
    }
    if (first == "check")
        return cmd_check(args.subspan(1));
    if (first == "inspect")
        return cmd_inspect(args.subspan(1));
    return cmd_compile(args);
}
