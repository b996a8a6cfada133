#include "learn.h"

#include "failure.h"

#include "backend_maps/backend_maps.h"
#include "live/live.h"
#include "net/net.h"
#include "source/source.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bw::bwrun {

artifact::Artifact learn_artifact()
{
    artifact::Artifact art;
    art.elf.assign(embedded::generic_bpf.begin(), embedded::generic_bpf.end());
    art.program_id = artifact::program_id(embedded::generic_bpf);
    art.policy.backend = artifact::Backend::Maps;
    art.policy.kernel = kernel_requirements();
    art.policy.ir = learn::recording_policy();
    art.policy.sources = {{"<learn>", ""}};
    SourceManager sources;
    Diagnostics diags(sources);
    auto tables = live::compile_tables(art.policy.ir, diags);
    if (!tables)
        throw rt::Failure("cannot compile learn mode's policy (a bug: please report it)");
    art.policy.tables = std::move(*tables);
    return art;
}

namespace {

// A socket operation as the net rules decide it: endpoint rules match only TCP and UDP
// sockets of the inet families (endpoint_protocol).
learn::SocketUse socket_use(const bw_net_object& o)
{
    learn::SocketUse use;
    use.op = o.op == BW_NET_CREATE ? ir::NetQuery::Op::Create
             : o.op == BW_NET_BIND ? ir::NetQuery::Op::Bind
                                   : ir::NetQuery::Op::Connect;
    use.family = o.family;
    if (use.op == ir::NetQuery::Op::Create || (o.family != AF_INET && o.family != AF_INET6))
        return use;
    use.protocol = endpoint_protocol(o.type, o.protocol);
    if (use.protocol == 0)
        return use;
    std::memcpy(use.address.data(), o.addr, sizeof o.addr);
    use.port = o.port;
    return use;
}

} // namespace

bool Recorder::record(const bw_event& e)
{
    if (e.op != BW_OP_AUDIT)
        return false;
    if (e.access == BW_NET_EVENT) {
        if (e.path_len == sizeof(bw_net_object)) {
            bw_net_object o{};
            std::memcpy(&o, e.path, sizeof o);
            ++recording_.sockets[socket_use(o)];
        }
        return true;
    }
    // An unresolvable path has nothing to learn from; the kinds asked are in arg.
    if (e.path_error == 0 && e.path_len > 0) {
        const auto kinds = static_cast<ir::AccessMask>((e.arg != 0 ? e.arg : 1u << e.access) & ir::kAllAccesses);
        recording_.paths[std::string(e.path, e.path_len)] |= kinds;
    }
    return true;
}

int write_learned_policy(const learn::Recording& recording, const std::string& out, const std::string& name)
{
    char tmp[] = "/tmp/bwrun-learn-XXXXXX";
    const int fd = mkstemp(tmp);
    if (fd < 0)
        rt::fail_errno("cannot create the recording's temporary file");
    const auto text = learn::encode(recording);
    const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (!ok) {
        unlink(tmp);
        rt::fail_errno("cannot write the recording");
    }
    // bwc is installed beside bwrun.
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        unlink(tmp);
        rt::fail_errno("cannot find bwrun's own folder, where bwc is");
    }
    std::string bwc(self, static_cast<std::size_t>(n));
    bwc = bwc.substr(0, bwc.rfind('/') + 1) + "bwc";
    const pid_t pid = fork();
    if (pid == 0) {
        execl(bwc.c_str(), "bwc", "learn", tmp, "-o", out.c_str(), "--name", name.c_str(), nullptr);
        std::fprintf(stderr, "bwrun: cannot run %s: %s\n", bwc.c_str(), std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    unlink(tmp);
    if (pid < 0)
        rt::fail_errno("cannot start bwc learn");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace bw::bwrun
