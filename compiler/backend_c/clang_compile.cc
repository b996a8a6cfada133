#include "backend_c/clang_compile.h"

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

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <cstring>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bw::backend_c {

namespace {

// The child's answer on the pipe: one tag byte, then the object or the diagnostics.
constexpr char kObject = 'O';
constexpr char kFailure = 'F';

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

// The child's result: the stripped object, or clang's diagnostics.
struct ChildResult {
    bool compiled = false;
    std::string bytes;
};

ChildResult compile_in_this_process(std::string_view policy_header)
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

bool write_all(int fd, const void* data, std::size_t size)
{
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const auto n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

[[noreturn]] void run_child(int out, std::string_view policy_header)
{
    const auto result = compile_in_this_process(policy_header);
    const char tag = result.compiled ? kObject : kFailure;
    const bool ok = write_all(out, &tag, 1) && write_all(out, result.bytes.data(), result.bytes.size());
    _exit(ok ? 0 : 1);
}

std::string describe_status(int status)
{
    if (WIFSIGNALED(status))
        return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return fmt::format("exited with status {}", WEXITSTATUS(status));
}

} // namespace

std::variant<std::vector<std::byte>, CompileFailure> compile_bpf(std::string_view policy_header)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return CompileFailure{fmt::format("cannot create a pipe for the compiler: {}", std::strerror(errno))};
    const pid_t child = fork();
    if (child < 0) {
        const int err = errno;
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return CompileFailure{fmt::format("cannot fork the compiler: {}", std::strerror(err))};
    }
    if (child == 0) {
        close(pipe_fds[0]);
        run_child(pipe_fds[1], policy_header);
    }
    close(pipe_fds[1]);

    std::string reply;
    char buffer[65536];
    for (;;) {
        const auto n = read(pipe_fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        reply.append(buffer, static_cast<std::size_t>(n));
    }
    close(pipe_fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }

    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty())
        return CompileFailure{"the compiler process " + describe_status(status)};
    if (reply[0] != kObject)
        return CompileFailure{reply.substr(1)};
    std::vector<std::byte> object(reply.size() - 1);
    std::memcpy(object.data(), reply.data() + 1, object.size());
    return object;
}

} // namespace bw::backend_c
