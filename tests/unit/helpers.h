// Shared by the unit tests: compile policy text through the real pipeline.
#pragma once

#include "driver/driver.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

namespace bw::test {

// A private temporary folder, removed with the object.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::filesystem::path path() const { return path_; }
    std::string write(const std::string& name, const std::string& text) const;

private:
    std::filesystem::path path_;
};

struct CompileResult {
    std::unique_ptr<Compilation> compilation; // owns the diagnostics and their sources
    std::optional<Compiled> compiled;
    std::optional<ir::Policy> policy; // check_* only: the front end's IR

    const Diagnostics& diags() const { return compilation->diags; }
};

// Options for tests: fixed bindings (HOME=/home/user, USER=user, UID/GID=1000,
// CWD=/home/user/project) and no look at this machine's symlinks, so that results do not
// depend on who runs the tests where.
PipelineOptions test_options();

// Writes `text` to a file named `name` in a temporary folder and runs the pipeline.
CompileResult compile_text(const std::string& text, const std::string& name = "test.bwp");
CompileResult compile_file(const std::string& path, const PipelineOptions& options = test_options());

// What `bwc check` runs: the front end and its lints, without the kernel-side stages.
CompileResult check_text(const std::string& text, const std::string& name = "test.bwp");
CompileResult check_file(const std::string& path, const PipelineOptions& options = test_options());

// The IR of a policy that must check without errors (the test fails, showing the
// diagnostics, when it does not).
ir::Policy checked_policy(const std::string& text);

// Random policies and paths over a few overlapping names, so that rules nest, collide
// and share prefixes: patterns with `*`, `?`, `[...]` and `**`, accesses among read,
// write, append and exec, rules sorted and numbered as the pipeline does.
// Random path rules, sometimes with invariant rules after them (as the lower stage adds them).
ir::Policy random_policy(std::mt19937& rng);
std::string random_path(std::mt19937& rng, int max_depth);
// Random uid, gid, owner and open-flag conditions on some of the policy rules.
void add_random_conditions(std::mt19937& rng, ir::Policy& policy);
// Up to 4 audit rules with random patterns, access kinds and (some) conditions, numbered
// after the policy's rules.
void add_random_audits(std::mt19937& rng, ir::Policy& policy);
// A query of read, write, append or exec with a random process and flags, over the few
// values that add_random_conditions uses.
ir::PathQuery random_query(std::mt19937& rng);

} // namespace bw::test
