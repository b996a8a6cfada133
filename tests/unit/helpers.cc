#include "helpers.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <stdexcept>

namespace bw::test {

TempDir::TempDir()
{
    std::string templ = (std::filesystem::temp_directory_path() / "bw-test.XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    path_ = templ;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const
{
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

PipelineOptions test_options()
{
    auto o = default_options();
    o.check.bindings = {{"HOME", "/home/user"}, {"USER", "user"}, {"UID", "1000"},
                        {"GID", "1000"}, {"CWD", "/home/user/project"}};
    o.check.check_symlinks = false;
    return o;
}

CompileResult compile_file(const std::string& path, const PipelineOptions& options)
{
    CompileResult r{std::make_unique<Compilation>(), std::nullopt, std::nullopt};
    std::string dump;
    r.compiled = run_pipeline(path, *r.compilation, options, dump);
    return r;
}

CompileResult check_file(const std::string& path, const PipelineOptions& options)
{
    CompileResult r{std::make_unique<Compilation>(), std::nullopt, std::nullopt};
    std::string dump;
    if (const auto file = load_file(path, r.compilation->sources, r.compilation->diags))
        r.policy = run_frontend(*file, *r.compilation, options, dump);
    return r;
}

CompileResult check_text(const std::string& text, const std::string& name)
{
    TempDir dir;
    return check_file(dir.write(name, text));
}

ir::Policy checked_policy(const std::string& text)
{
    auto r = check_text(text);
    std::string rendered;
    for (const auto& d : r.diags().all())
        rendered += r.diags().render(d, false);
    INFO(rendered);
    REQUIRE(r.policy);
    return *r.policy;
}

CompileResult compile_text(const std::string& text, const std::string& name)
{
    TempDir dir;
    return compile_file(dir.write(name, text));
}

} // namespace bw::test
