// bwc: compiles .bwp policies into policy.o, checks them for CI, inspects artifacts.
#include "artifact/artifact.h"
#include "diagnostics/emit.h"
#include "driver/driver.h"
#include "format/format.h"
#include "query/query.h"
#include "stats/stats.h"
#include "version.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <linux/audit.h>
#include <sstream>
#include <span>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>


namespace {

using namespace bw;

constexpr int kExitOk = 0;
constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;

void usage(std::FILE* out)
{
    std::fputs("usage: bwc POLICY.bwp -o POLICY.o [--backend=maps|c] [--format=text|json|sarif]\n"
               "         [--emit=ast|ir|automata|maps|c|seccomp]   (print a stage's output and stop)\n"
               "         --backend=maps (default): the generic BPF program and the policy's tables;\n"
               "         --backend=c: a BPF program specialised to the policy, compiled by clang\n"
               "       bwc check [--format=text|json|sarif] [-Werror] POLICY.bwp...\n"
               "         both take -D NAME=VALUE (bind a built-in variable), -I DIR (search DIR for\n"
               "         includes first) and --no-symlink-check\n"
               "       bwc fmt [--check] POLICY.bwp...   (`bwc fmt -`: stdin to stdout)\n"
               "       bwc POLICY.bwp --stats [-o POLICY.o]   (sizes and the rules that cost most)\n"
               "       bwc query POLICY.bwp|POLICY.o ACCESS PATH [--exe P] [--uid N] [--gid N] [--owner]\n"
               "                 [--flags O_TRUNC,...] [--device c|b:MAJOR:MINOR [--ioctl CMD]]\n"
               "       bwc query POLICY.bwp|POLICY.o syscall NAME | connect|bind tcp|udp ADDR:PORT | socket FAMILY\n"
               "       bwc query POLICY.bwp|POLICY.o --batch FILE   (one query a line, answered in order)\n"
               "         (prints the decision and the rule that made it; -D and -I for a .bwp only:\n"
               "         an artifact keeps the bindings it was compiled with)\n"
               "       bwc learn RECORDING -o POLICY.bwp [--name NAME]   (the policy of what\n"
               "         bwrun --learn recorded; bwrun runs it for you)\n"
               "       bwc inspect POLICY.o   (sources and their SHA-256, backend, kernel features,\n"
               "         bindings, rules)\n"
               "       bwc --version\n"
               "\n"
               "Diagnostics go to stderr as text, or to stdout as JSON Lines (json) or as one\n"
               "SARIF 2.1.0 log for all files (sarif).\n"
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

// Text is for people and goes with other messages to stderr; json and sarif are documents
// for tools, on stdout.
void print_diagnostics(DiagFormat format, const DiagnosticSink& sink)
{
    const auto doc = sink.document();
    std::fwrite(doc.data(), 1, doc.size(), format == DiagFormat::Text ? stderr : stdout);
}

// Takes `-D NAME=VALUE` (a built-in's value), `-I DIR` (a library folder, searched before
// the defaults) and `--no-symlink-check` out of `args` into `options`, and returns the
// other arguments; std::nullopt, with a usage message, when one is malformed.
std::optional<std::vector<char*>> take_pipeline_options(std::span<char*> args, PipelineOptions& options)
{
    std::vector<char*> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--no-symlink-check") {
            options.check.check_symlinks = false;
            continue;
        }
        if (a != "-D" && a != "-I") {
            rest.push_back(args[i]);
            continue;
        }
        if (i + 1 >= args.size()) {
            usage_error(fmt::format("{} needs a value", a));
            return std::nullopt;
        }
        const std::string value = args[++i];
        if (a == "-I") {
            options.resolve.library_dirs.insert(options.resolve.library_dirs.begin(), value);
            continue;
        }
        const auto eq = value.find('=');
        if (eq == std::string::npos || eq == 0) {
            usage_error("-D wants NAME=VALUE, e.g. -D EXE=/usr/bin/make");
            return std::nullopt;
        }
        options.check.bindings[value.substr(0, eq)] = value.substr(eq + 1);
    }
    return rest;
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
    if (v == "c")
        return Emit::C;
    if (v == "seccomp")
        return Emit::Seccomp;
    return std::nullopt;
}

std::optional<artifact::Backend> parse_backend(std::string_view v)
{
    if (v == "maps")
        return artifact::Backend::Maps;
    if (v == "c")
        return artifact::Backend::C;
    return std::nullopt;
}

int cmd_compile(std::span<char*> all_args)
{
    std::string input, output;
    Emit emit = Emit::None;
    DiagFormat format = DiagFormat::Text;
    std::optional<artifact::Backend> backend;
    bool stats = false;
    auto options = default_options();
    auto taken = take_pipeline_options(all_args, options);
    if (!taken)
        return kExitUsage;
    const std::span<char*> args(*taken);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--stats") {
            stats = true;
        } else if (a == "-o") {
            if (i + 1 >= args.size())
                return usage_error("-o needs a file name");
            output = args[++i];
        } else if (a.starts_with("--emit=")) {
            const auto e = parse_emit(a.substr(7));
            if (!e)
                return usage_error(fmt::format("unknown stage `{}` for --emit", a.substr(7)));
            emit = *e;
        } else if (a.starts_with("--backend=")) {
            backend = parse_backend(a.substr(10));
            if (!backend)
                return usage_error(fmt::format("unknown backend `{}` (maps or c)", a.substr(10)));
        } else if (a.starts_with("--format=")) {
            const auto f = parse_diag_format(a.substr(9));
            if (!f)
                return usage_error(fmt::format("unknown format `{}` for --format", a.substr(9)));
            format = *f;
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
    if (output.empty() && emit == Emit::None && !stats)
        return usage_error("no output file given (-o POLICY.o)");
    if (stats && (emit != Emit::None || format != DiagFormat::Text))
        return usage_error("--stats writes to stdout, as --emit and --format=json|sarif do; use one");
    if (emit != Emit::None && format != DiagFormat::Text)
        return usage_error("--emit and --format=json|sarif both write to stdout; use one");
    // The C source exists only in the specialised backend.
    if (emit == Emit::C && backend == artifact::Backend::Maps)
        return usage_error("--emit=c shows the specialised backend's source: drop --backend=maps");
    if (emit == Emit::C)
        backend = artifact::Backend::C;
    options.backend = backend.value_or(artifact::Backend::Maps);

    Compilation c;
    std::string dump;
    options.emit = emit;
    const auto compiled = run_pipeline(input, c, options, dump);
    const bool ok = !c.diags.has_errors() &&
                    (emit != Emit::None || output.empty() ||
                     run_write_artifact(*compiled, output, c));
    // Printed once, after writing, so that the document also holds a failed write.
    DiagnosticSink sink(format, stderr_color(), BW_VERSION_STRING);
    sink.add(c.sources, c.diags);
    print_diagnostics(format, sink);
    if (!ok)
        return kExitErrors;
    if (emit != Emit::None)
        std::fputs(dump.c_str(), stdout);
    if (stats)
        std::fputs(stats::render(stats::compute(compiled->policy, compiled->automaton, compiled->tables)).c_str(),
                   stdout);
    return kExitOk;
}

int cmd_check(std::span<char*> all_args)
{
    bool werror = false;
    DiagFormat format = DiagFormat::Text;
    std::vector<std::string> files;
    auto options = default_options();
    auto taken = take_pipeline_options(all_args, options);
    if (!taken)
        return kExitUsage;
    const std::span<char*> args(*taken);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "-Werror") {
            werror = true;
        } else if (a.starts_with("--format=")) {
            const auto f = parse_diag_format(a.substr(9));
            if (!f)
                return usage_error(fmt::format("unknown format `{}` for --format", a.substr(9)));
            format = *f;
        } else if (a.starts_with("-")) {
            return usage_error(fmt::format("unknown option `{}` for check", a));
        } else {
            files.emplace_back(a);
        }
    }
    if (files.empty())
        return usage_error("no policy file given to check");
    // One document for all files: a SARIF consumer takes one log per run of the tool.
    DiagnosticSink sink(format, stderr_color(), BW_VERSION_STRING);
    bool failed = false;
    for (const auto& f : files) {
        // Checking is the front end and its lints: what the kernel side can enforce is
        // the compiler's concern, not the linter's.
        Compilation c;
        std::string dump;
        if (const auto file = load_file(f, c.sources, c.diags))
            run_frontend(*file, c, options, dump);
        sink.add(c.sources, c.diags);
        failed |= c.diags.has_errors() || (werror && c.diags.warning_count() > 0);
    }
    print_diagnostics(format, sink);
    return failed ? kExitErrors : kExitOk;
}

// Every rule with its provenance, defaults included, in id order.
std::vector<std::pair<ir::RuleId, const ir::Provenance*>> rules_by_id(const ir::Policy& p)
{
    std::vector<std::pair<ir::RuleId, const ir::Provenance*>> out;
    for (const auto* d : {&p.path_default, &p.net_default, &p.syscall_default})
        out.emplace_back(d->id, &d->origin);
    auto add = [&](const auto& rules) {
        for (const auto& r : rules)
            out.emplace_back(r.id, &r.origin);
    };
    add(p.rules);
    add(p.audits);
    add(p.syscalls);
    add(p.net);
    add(p.devices);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
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
    std::printf("policy:          %s\n", p.ir.name.c_str());
    std::printf("format version:  %u\n", p.format_version);
    std::printf("BPF ABI:         %u\n", p.abi_version);
    std::printf("compiled by:     bwc %s\n", p.bwc_version.c_str());
    std::printf("backend:         %s\n", std::string(artifact::name(p.backend)).c_str());
    // As sha256sum prints them, so that `sha256sum -c` can check the sources.
    for (const auto& f : p.sources)
        std::printf("source:          %s  %s\n", f.sha256.c_str(), f.name.c_str());
    if (p.ir.bindings.empty())
        std::printf("bindings:        none\n");
    for (const auto& [name, value] : p.ir.bindings)
        std::printf("binding:         %s\n", fmt::format("${{{}}} = {:?}", name, value).c_str());
    std::printf("kernel:          Linux %s or later (%s)\n", p.kernel.min_kernel.c_str(), p.kernel.why.c_str());
    for (const auto& f : p.kernel.features)
        std::printf("  %s (%s): %s\n", f.name.c_str(), f.since.c_str(), f.why.c_str());
    std::printf("invariants:      %s\n", ir::invariant_names(p.ir.invariants()).c_str());
    std::printf("unsafe:          %s\n", ir::invariant_names(p.ir.unsafe).c_str());
    std::printf("automaton:       %u states, %u byte classes, %zu transitions\n", p.tables.sandbox.nstates,
                p.tables.sandbox.nclasses, p.tables.trans.size());
    std::printf("network:\n%s", dump(p.tables.net).c_str());
    if (p.seccomp.empty())
        std::printf("seccomp:         none (the policy has no syscall rule)\n");
    for (const auto& f : p.seccomp)
        std::printf("seccomp:         %s, %zu instructions\n", f.audit_arch == AUDIT_ARCH_X86_64 ? "x86_64" : "aarch64",
                    f.code.size());
    std::printf("rules:\n");
    for (const auto& [id, origin] : rules_by_id(p.ir))
        std::printf("  #%-4u %s:%u: %s\n", id, origin->file.c_str(), origin->line, origin->text.c_str());
    return kExitOk;
}

// An artifact's IR, as it was compiled; nullopt after printing why there is none.
std::optional<ir::Policy> artifact_policy(const std::string& path)
{
    auto read = artifact::read(path);
    if (const auto* e = std::get_if<artifact::Error>(&read)) {
        std::fprintf(stderr, "bwc: %s\n", e->message.c_str());
        return std::nullopt;
    }
    return std::move(std::get<artifact::Artifact>(read).policy.ir);
}

// A .bwp's IR through the front end; nullopt after printing the diagnostics.
std::optional<ir::Policy> source_policy(const std::string& path, const PipelineOptions& options)
{
    Compilation c;
    std::string dump;
    std::optional<ir::Policy> policy;
    if (const auto file = load_file(path, c.sources, c.diags))
        policy = run_frontend(*file, c, options, dump);
    if (!policy || c.diags.has_errors()) {
        c.diags.print(stderr, stderr_color());
        return std::nullopt;
    }
    return policy;
}

// --batch FILE: one query a line, its words separated by spaces ("read /etc/passwd").
std::optional<std::vector<query::Query>> read_batch(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        usage_error(fmt::format("cannot read the batch file {}: {}", path, std::strerror(errno)));
        return std::nullopt;
    }
    std::vector<query::Query> queries;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        std::istringstream words_in(line);
        const std::vector<std::string> words{std::istream_iterator<std::string>(words_in), {}};
        if (words.empty())
            continue;
        auto query = query::parse(words);
        if (const auto* e = std::get_if<std::string>(&query)) {
            usage_error(fmt::format("{}:{}: {}", path, number, *e));
            return std::nullopt;
        }
        queries.push_back(std::move(std::get<query::Query>(query)));
    }
    return queries;
}

int cmd_query(std::span<char*> args)
{
    auto options = default_options();
    const auto rest = take_pipeline_options(args, options);
    if (!rest)
        return kExitUsage;
    std::vector<std::string> words(rest->begin(), rest->end()); // the policy file, then the query
    std::vector<query::Query> queries;
    if (const auto batch = std::find(words.begin(), words.end(), "--batch"); batch != words.end()) {
        if (batch + 1 == words.end() || words.size() != 3)
            return usage_error("query --batch wants a policy file and the batch file, and no query of its own");
        auto read = read_batch(*(batch + 1));
        if (!read)
            return kExitUsage;
        queries = std::move(*read);
        words.erase(batch, batch + 2);
    } else {
        if (words.empty())
            return usage_error("query wants a policy file and a query");
        auto query = query::parse(std::span<const std::string>(words).subspan(1));
        if (const auto* e = std::get_if<std::string>(&query))
            return usage_error(*e);
        queries.push_back(std::move(std::get<query::Query>(query)));
    }

    // By content, not by name: an artifact is an ELF object whatever it is called.
    std::optional<ir::Policy> policy;
    if (artifact::is_elf_file(words[0])) {
        if (rest->size() != args.size())
            return usage_error("-D, -I and --no-symlink-check apply to a .bwp: an artifact keeps the bindings and "
                               "includes it was compiled with (`bwc inspect` lists them)");
        policy = artifact_policy(words[0]);
    } else {
        policy = source_policy(words[0], options);
    }
    if (!policy)
        return kExitErrors;
    for (const auto& query : queries)
        std::fputs(query::answer(*policy, query).c_str(), stdout);
    return kExitOk;
}

// Standard input, as long as a policy file may be; FileUnreadable when it cannot be read.
std::optional<std::string> read_stdin(Diagnostics& diags)
{
    std::string text;
    char buf[65536];
    std::size_t n = 0;
    while (text.size() <= kMaxSourceBytes && (n = std::fread(buf, 1, sizeof buf, stdin)) > 0)
        text.append(buf, n);
    if (std::ferror(stdin) != 0 || text.size() > kMaxSourceBytes) {
        diags.report(DiagKind::FileUnreadable, SourceLocation{}, "<stdin>",
                     std::ferror(stdin) != 0 ? std::string(std::strerror(errno))
                                             : fmt::format("it is larger than {} MiB", kMaxSourceBytes >> 20));
        return std::nullopt;
    }
    return text;
}

// Replaces the file `path` names (through symlinks) by renaming a temporary file over it, so
// that nobody ever reads half a policy; the mode is kept. Returns why it could not.
std::optional<std::string> write_atomically(const std::string& path, const std::string& text)
{
    char* resolved = realpath(path.c_str(), nullptr);
    if (resolved == nullptr)
        return std::strerror(errno);
    const std::string target = resolved;
    std::free(resolved);
    struct stat st {};
    if (stat(target.c_str(), &st) != 0)
        return std::strerror(errno);
    if (!S_ISREG(st.st_mode))
        return "it is not a regular file";
    const auto slash = target.rfind('/') + 1;
    std::string temp = target.substr(0, slash) + "." + target.substr(slash) + ".fmt-XXXXXX";
    const int fd = mkstemp(temp.data());
    if (fd < 0)
        return std::strerror(errno);
    bool ok = fchmod(fd, st.st_mode & 07777) == 0;
    for (std::size_t done = 0; ok && done < text.size();) {
        const auto n = write(fd, text.data() + done, text.size() - done);
        ok = n > 0 || (n < 0 && errno == EINTR);
        done += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    ok = ok && fsync(fd) == 0;
    const int write_errno = errno;
    if (close(fd) == 0 && ok && rename(temp.c_str(), target.c_str()) == 0)
        return std::nullopt;
    const std::string error = std::strerror(ok ? errno : write_errno);
    unlink(temp.c_str());
    return error;
}

int cmd_fmt(std::span<char*> args)
{
    bool check = false;
    std::vector<std::string> files;
    for (const std::string_view a : args) {
        if (a == "--check")
            check = true;
        else if (a.starts_with("-") && a != "-")
            return usage_error(fmt::format("unknown option `{}` for fmt", a));
        else
            files.emplace_back(a);
    }
    if (files.empty())
        return usage_error("no policy file given to format");
    const bool from_stdin = std::find(files.begin(), files.end(), "-") != files.end();
    if (from_stdin && files.size() > 1)
        return usage_error("`-` (stdin) is formatted alone");
    bool failed = false;
    for (const auto& f : files) {
        const std::string name = from_stdin ? "<stdin>" : f;
        SourceManager sources;
        Diagnostics diags(sources);
        std::optional<FileId> id;
        if (!from_stdin)
            id = load_file(f, sources, diags);
        else if (auto text = read_stdin(diags))
            id = sources.add(name, std::move(*text));
        const SourceFile* file = id ? &sources.file(*id) : nullptr;
        const auto formatted = file ? run_format(*file, diags) : std::nullopt;
        if (formatted && from_stdin && !check) {
            std::fwrite(formatted->data(), 1, formatted->size(), stdout);
        } else if (formatted && *formatted != file->text) {
            if (check) {
                std::fprintf(stderr, "would reformat %s\n", name.c_str());
                failed = true;
            } else if (const auto error = write_atomically(f, *formatted)) {
                diags.report(DiagKind::OutputWriteFailed, SourceLocation{}, f, *error);
            } else {
                std::fprintf(stderr, "formatted %s\n", name.c_str());
            }
        }
        diags.print(stderr, stderr_color());
        failed |= diags.has_errors();
    }
    return failed ? kExitErrors : kExitOk;
}

} // namespace

// bwc learn RECORDING -o OUT.bwp [--name NAME]: the policy of what bwrun --learn recorded.
int cmd_learn(std::span<char*> args)
{
    std::string recording_path, out, name = "learned";
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if ((a == "-o" || a == "--name") && i + 1 < args.size())
            (a == "-o" ? out : name) = args[++i];
        else if (!a.starts_with("-") && recording_path.empty())
            recording_path = a;
        else
            return usage_error(fmt::format("unexpected `{}` for learn", a));
    }
    if (recording_path.empty() || out.empty())
        return usage_error("learn wants a recording (from bwrun --learn) and -o OUT.bwp");
    std::ifstream in(recording_path);
    if (!in) {
        std::fprintf(stderr, "bwc: cannot read the recording %s: %s\n", recording_path.c_str(), std::strerror(errno));
        return kExitErrors;
    }
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    std::string error;
    const auto recording = learn::decode(text, error);
    if (!recording) {
        std::fprintf(stderr, "bwc: %s is not a recording of bwrun --learn: %s\n", recording_path.c_str(),
                     error.c_str());
        return kExitErrors;
    }
    Compilation c;
    const auto policy = run_learn_pipeline(*recording, name, out, c);
    if (!policy)
        return kExitErrors;
    const std::string tmp = out + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        if (!(f << *policy) || !f.flush()) {
            std::fprintf(stderr, "bwc: cannot write %s: %s\n", tmp.c_str(), std::strerror(errno));
            std::remove(tmp.c_str());
            return kExitErrors;
        }
    }
    if (std::rename(tmp.c_str(), out.c_str()) != 0) {
        std::fprintf(stderr, "bwc: cannot write %s: %s\n", out.c_str(), std::strerror(errno));
        std::remove(tmp.c_str());
        return kExitErrors;
    }
    return kExitOk;
}

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
    if (first == "query")
        return cmd_query(args.subspan(1));
    if (first == "fmt")
        return cmd_fmt(args.subspan(1));
    if (first == "learn")
        return cmd_learn(args.subspan(1));
    return cmd_compile(args);
}
