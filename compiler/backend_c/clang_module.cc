// The part of the specialised backend that links clang and LLVM 19, built as a module that
// bwc loads only in the child that compiles (clang_compile.cc): a compile with the map
// backend then never maps the libraries. Its one entry point is bw_clang_compile.
#include "backend_c/embedded_sources.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <llvm/ObjCopy/ConfigManager.h>
#include <llvm/ObjCopy/ObjCopy.h>
#include <llvm/Object/Binary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bw::backend_c {

namespace {

// The same flags as cmake/BpfObject.cmake uses for the generic program.
std::vector<std::string> compile_args()
{
    return {"clang",
            "-target",
            "bpf",
            "-O2",
            "-g",
            "-Wall",
            "-Werror",
            "-D__TARGET_ARCH_x86",
            "-mcpu=v3",
            "-nostdinc",
            "-resource-dir",
            "/bumblewrap/resource",
            "-I" + std::string(kTemplateRoot),
            "-isystem",
            std::string(kIncludeRoot),
            "-c",
            std::string(kTemplateFile),
            "-o",
            "/bumblewrap/policy.o"};
}

llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> source_tree(std::string_view policy_header)
{
    auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    auto add = [&](std::string_view path, std::string_view text) {
        fs->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    };
    for (const auto& f : embedded_sources)
        add(f.path, f.text);
    add(kPolicyHeader, policy_header);
    return fs;
}

// The stripped object, or clang's diagnostics.
struct Result {
    bool compiled = false;
    std::string bytes;
};

Result compile(std::string_view policy_header)
{
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();

    std::string diagnostics;
    llvm::raw_string_ostream diag_out(diagnostics);
    auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    auto* printer = new clang::TextDiagnosticPrinter(diag_out, diag_options.get());
    auto diags = clang::CompilerInstance::createDiagnostics(diag_options.get(), printer, true);

    const auto fs = source_tree(policy_header);
    const auto args = compile_args();
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    clang::CreateInvocationOptions options;
    options.Diags = diags;
    options.VFS = fs;
    std::shared_ptr<clang::CompilerInvocation> invocation = clang::createInvocation(argv, options);
    if (!invocation)
        return {false, "clang refused its arguments:\n" + diagnostics};
    invocation->getFrontendOpts().DisableFree = false;

    clang::CompilerInstance ci;
    ci.setVerboseOutputStream(llvm::nulls()); // "1 error generated.": the diagnostics say it
    ci.setInvocation(std::move(invocation));
    ci.createDiagnostics(printer, false);
    ci.createFileManager(fs);
    llvm::SmallString<0> object;
    ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
    clang::EmitObjAction action;
    if (!ci.ExecuteAction(action) || object.empty())
        return {false, diagnostics};

    auto binary = llvm::object::createBinary(llvm::MemoryBufferRef(object.str(), "policy.o"));
    if (!binary)
        return {false, "reading clang's object: " + llvm::toString(binary.takeError())};
    llvm::objcopy::ConfigManager strip;
    strip.Common.StripDebug = true;
    std::string stripped;
    llvm::raw_string_ostream stripped_out(stripped);
    if (auto err = llvm::objcopy::executeObjcopyOnBinary(strip, **binary, stripped_out))
        return {false, "stripping DWARF: " + llvm::toString(std::move(err))};
    stripped_out.flush();
    return {true, std::move(stripped)};
}

} // namespace

} // namespace bw::backend_c

// Compiles specialised.bpf.c with `header` as bw_policy.h. Returns true with the object,
// or false with clang's messages, in a malloc'd buffer the caller frees.
extern "C" __attribute__((visibility("default"))) bool bw_clang_compile(const char* header, std::size_t size,
                                                                         char** out, std::size_t* out_size)
{
    const auto result = bw::backend_c::compile(std::string_view(header, size));
    *out_size = result.bytes.size();
    *out = static_cast<char*>(std::malloc(result.bytes.size() + 1));
    if (*out == nullptr)
        std::abort();
    std::memcpy(*out, result.bytes.data(), result.bytes.size());
    return result.compiled;
}
