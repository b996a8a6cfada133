// libFuzzer target for the parser, the front end (resolve, check, lower, lint), the path
// automata, the map backend and the formatter. Built only with -DBW_FUZZ=ON; run it with
// tests/fuzz/run_fuzz.sh SECONDS. Properties checked besides "no crash, no sanitizer report":
// every diagnostic renders; run_format is a fixed point (format(format(x)) == format(x)); and
// the formatted text means what the input meant (same verdict from the front end, same IR).
#include "driver/driver.h"
#include "format/format.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>

namespace {

// Inputs larger than this are skipped: they add time per run, not coverage.
constexpr std::size_t kMaxInputBytes = 64 * 1024;

const bw::PipelineOptions& options()
{
    static const bw::PipelineOptions o = [] {
        auto p = bw::default_options();
        // Fixed inputs, so that a crash reproduces on any machine: `include "name"` finds only
        // the checked-in policies of tests/fuzz/include/, and nothing looks at this machine's
        // filesystem for symlinks or reads its environment.
        p.resolve.library_dirs = {BW_FUZZ_INCLUDE_DIR};
        p.check.check_symlinks = false;
        p.check.bindings = {
            {"HOME", "/home/fuzz"}, {"USER", "fuzz"},         {"UID", "1000"},
            {"GID", "1000"},        {"CWD", "/home/fuzz/src"}, {"EXE", "/usr/bin/fuzz"},
        };
        return p;
    }();
    return o;
}

void render_all(const bw::Diagnostics& diags)
{
    for (const auto& d : diags.all()) {
        const auto text = diags.render(d, false);
        if (text.empty())
            __builtin_trap();
    }
}

// The IR's meaning: its dump without source lines, which formatting moves, and with the
// whitespace of net and device rules (printed as written) removed.
std::string meaning(const bw::ir::Policy& policy)
{
    std::istringstream in(bw::ir::dump(policy));
    std::string out;
    for (std::string line; std::getline(in, line);) {
        // Rules end with "  file:line".
        const auto where = line.rfind("  ");
        const auto colon = line.rfind(':');
        if (where != std::string::npos && where > 0 && colon != std::string::npos && colon > where &&
            colon + 1 < line.size() && line.find_first_not_of("0123456789", colon + 1) == std::string::npos)
            line.erase(where);
        if (line.find(" net ") != std::string::npos || line.find(" device ") != std::string::npos)
            std::erase_if(line, [](unsigned char ch) { return std::isspace(ch) != 0; });
        out += line + "\n";
    }
    return out;
}

// Runs the whole compiler on `text`; the meaning of the IR when the front end accepts it.
std::optional<std::string> compile(const std::string& text, bool later_stages)
{
    bw::Compilation c;
    // Named inside the include folder (no such file exists there), so that relative includes
    // resolve against that folder rather than the fuzzer's working directory.
    const auto id = c.sources.add(BW_FUZZ_INCLUDE_DIR "/fuzz.bwp", text);
    std::string dump;
    auto policy = bw::run_frontend(id, c, options(), dump);
    std::optional<std::string> out;
    if (policy) {
        out = meaning(*policy);
        if (later_stages) {
            // Tighter bounds than bwc's: the fuzzer looks for crashes, and a policy near the
            // real bounds takes seconds under the sanitizers (a timeout, not a finding).
            const bw::AutomatonLimits limits{4096, 1u << 20, 1u << 18};
            auto automaton = bw::run_compile_paths(*policy, c.diags, limits);
            if (automaton)
                (void)bw::run_backend_maps(*policy, *automaton);
        }
    }
    render_all(c.diags);
    return out;
}

void fuzz_format(const std::string& text, const std::optional<std::string>& original_meaning)
{
    bw::SourceManager sources;
    bw::Diagnostics diags(sources);
    const auto id = sources.add("fuzz.bwp", text);
    const auto once = bw::run_format(sources.file(id), diags);
    render_all(diags);
    if (!once)
        return;
    const auto id2 = sources.add("fuzz-formatted.bwp", *once);
    const auto twice = bw::run_format(sources.file(id2), diags);
    render_all(diags);
    if (!twice) {
        std::fprintf(stderr, "fuzz_frontend: the formatted text no longer parses\n");
        __builtin_trap();
    }
    if (*twice != *once) {
        std::fprintf(stderr, "fuzz_frontend: format is not a fixed point\n--- once ---\n%s\n--- twice ---\n%s\n",
                     once->c_str(), twice->c_str());
        __builtin_trap();
    }
    if (*once == text)
        return;
    const auto formatted_meaning = compile(*once, false);
    if (formatted_meaning != original_meaning) {
        std::fprintf(stderr, "fuzz_frontend: formatting changed the meaning\n--- input ---\n%s\n--- IR ---\n%s\n"
                             "--- formatted ---\n%s\n--- IR ---\n%s\n",
                     text.c_str(), original_meaning ? original_meaning->c_str() : "(rejected)", once->c_str(),
                     formatted_meaning ? formatted_meaning->c_str() : "(rejected)");
        __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size > kMaxInputBytes)
        return -1; // not added to the corpus
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto original = compile(text, true);
    fuzz_format(text, original);
    return 0;
}
