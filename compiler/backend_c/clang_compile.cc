#include "backend_c/clang_compile.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bw::backend_c {

namespace {

// The child's answer on the pipe: one tag byte, then the object or the diagnostics.
constexpr char kObject = 'O';
constexpr char kFailure = 'F';
constexpr char kNoModule = 'M';
constexpr const char* kModuleName = "bumblewrap-clang.so";

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

// bumblewrap-clang.so: next to the running program (the build tree, or a program
// installed beside it), else in PREFIX/lib/bumblewrap of the running program's prefix (a
// .deb installs to /usr whatever prefix the build was given), else of the build's.
std::string module_path()
{
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    for (const auto& candidate : {exe.parent_path() / kModuleName,
                                  exe.parent_path().parent_path() / "lib/bumblewrap" / kModuleName}) {
        if (!ec && std::filesystem::exists(candidate, ec))
            return candidate.string();
    }
    return std::string(BW_INSTALLED_MODULE_DIR) + "/" + kModuleName;
}

[[noreturn]] void run_child(int out, std::string_view policy_header)
{
    using CompileFn = bool (*)(const char*, std::size_t, char**, std::size_t*);
    const auto path = module_path();
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto* compile = module ? reinterpret_cast<CompileFn>(dlsym(module, "bw_clang_compile")) : nullptr;
    char* bytes = nullptr;
    std::size_t size = 0;
    bool compiled = false;
    std::string failure;
    if (compile == nullptr)
        failure = fmt::format("cannot load the clang module {}: {}", path, dlerror());
    else
        compiled = compile(policy_header.data(), policy_header.size(), &bytes, &size);
    const char tag = compiled ? kObject : compile == nullptr ? kNoModule : kFailure;
    const bool ok = write_all(out, &tag, 1) &&
                    (bytes != nullptr ? write_all(out, bytes, size) : write_all(out, failure.data(), failure.size()));
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
        return CompileFailure{reply.substr(1), reply[0] == kNoModule};
    std::vector<std::byte> object(reply.size() - 1);
    std::memcpy(object.data(), reply.data() + 1, object.size());
    return object;
}

} // namespace bw::backend_c
