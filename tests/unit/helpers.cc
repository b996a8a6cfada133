#include "helpers.h"

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

CompileResult compile_file(const std::string& path)
{
    CompileResult r{std::make_unique<Compilation>(), std::nullopt};
    std::string dump;
    r.compiled = run_pipeline(path, *r.compilation, Emit::None, dump);
    return r;
}

CompileResult compile_text(const std::string& text, const std::string& name)
{
    TempDir dir;
    return compile_file(dir.write(name, text));
}

} // namespace bw::test
