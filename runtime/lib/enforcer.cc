#include "enforcer.h"

#include "failure.h"
#include "kernel_support.h"
#include "paths.h"

#include "backend_maps/backend_maps.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <vector>

namespace bw::rt {

namespace {

// The inode number of one of this process's namespaces ("mnt", "user"), which the
// sandbox's program also reads: its program starts in them, and paths are named in its
// mount namespace (bpf-templates/path.bpf.h).
std::uint32_t namespace_inode(const char* kind)
{
    struct stat st{};
    if (stat(fmt::format("/proc/self/ns/{}", kind).c_str(), &st) != 0)
        fail_errno(fmt::format("cannot read this process's {} namespace (/proc/self/ns/{})", kind, kind));
    return static_cast<std::uint32_t>(st.st_ino);
}

// The sandbox table is pinned last: its pin marks a complete load.
constexpr const char* kSandboxes = "bw_sandboxes";
constexpr const char* kEvents = "bw_events";
constexpr const char* kCgFilter = "bw_cg_filter";
constexpr const char* kTrans = "bw_trans";
constexpr const char* kAccepts = "bw_accepts"; // the map backend only
constexpr const char* kNet = "bw_net";             // the map backend only
constexpr const char* kNetRules = "bw_net_rules";  // the map backend only
constexpr const char* kLinks = "bw_links";
constexpr const char* kDevices = "bw_devices";     // the map backend only

void make_private_dir(const std::string& path)
{
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
        fail_errno("cannot create " + path);
    if (chmod(path.c_str(), 0700) != 0)
        fail_errno("cannot restrict " + path);
}

// Pins need bpffs at /sys/fs/bpf; most systems mount it at boot, minimal ones do not.
void ensure_bpffs()
{
    constexpr const char* kBpffs = "/sys/fs/bpf";
    struct statfs fs{};
    if (statfs(kBpffs, &fs) == 0 && fs.f_type == BPF_FS_MAGIC)
        return;
    if (mount("bpf", kBpffs, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0)
        fail_errno(std::string("bpffs is not mounted at ") + kBpffs + " and mounting it failed");
}

int pinned(const std::string& dir, const char* name)
{
    const std::string path = dir + "/" + name;
    const int fd = bpf_obj_get(path.c_str());
    if (fd < 0)
        fail_errno("cannot open pinned " + path);
    return fd;
}

void remove_pins(const std::string& dir)
{
    if (DIR* d = opendir(dir.c_str())) {
        while (const dirent* e = readdir(d)) {
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                unlink((dir + "/" + e->d_name).c_str());
        }
        closedir(d);
    }
    rmdir(dir.c_str());
}

bool is_loaded(const std::string& dir)
{
    return access((dir + "/" + kSandboxes).c_str(), F_OK) == 0;
}

// Fills an array map with `entries` values of `value_size` bytes, keys 0 to entries - 1.
void fill_array(int fd, const char* name, std::uint32_t value_size, std::uint32_t entries, const void* values)
{
    std::vector<std::uint32_t> keys(entries);
    for (std::uint32_t i = 0; i < entries; ++i)
        keys[i] = i;
    std::uint32_t count = entries;
    if (bpf_map_update_batch(fd, keys.data(), values, &count, nullptr) == 0)
        return;
    // Kernels without batch updates for arrays: one element at a time.
    const auto* bytes = static_cast<const std::byte*>(values);
    for (std::uint32_t i = 0; i < entries; ++i) {
        if (bpf_map_update_elem(fd, &keys[i], bytes + std::size_t{i} * value_size, BPF_ANY) != 0)
            fail_errno(fmt::format("cannot fill map {}", name));
    }
}

[[noreturn]] void fail_load(bpf_object* obj, const std::string& dir, const std::string& what, int err)
{
    bpf_object__close(obj);
    remove_pins(dir);
    const auto lsms = active_lsms();
    if (lsms && lsms->find("bpf") == std::string::npos)
        throw CannotEnforce(bpf_lsm_missing_message(lsms));
    fail_errno(what, err);
}

// Sets the slot of bw_cg_filter that the cgroup's processes look at (common.bpf.h): until
// it is set the program takes them for outside every sandbox, so it comes before the
// sandbox's entry.
void admit_cgroup(const std::string& dir, std::uint64_t cgroup_id)
{
    const int fd = pinned(dir, kCgFilter);
    const std::uint32_t slot = cgroup_id & (BW_CG_FILTER_SLOTS - 1), set = 1;
    const bool ok = bpf_map_update_elem(fd, &slot, &set, BPF_ANY) == 0;
    const int err = errno;
    close(fd);
    if (!ok)
        fail_errno("cannot mark the sandbox's cgroup in " + dir + "/" + kCgFilter, err);
}

void pin_map(bpf_object* obj, const std::string& dir, const char* name)
{
    bpf_map* map = bpf_object__find_map_by_name(obj, name);
    const int err = map ? bpf_map__pin(map, (dir + "/" + name).c_str()) : -ENOENT;
    if (err != 0)
        fail_load(obj, dir, fmt::format("cannot pin map {} in {}", name, dir), -err);
}

void fill_program_array(bpf_object* obj, const std::string& dir, const char* name, std::uint32_t value_size,
                        std::size_t entries, const void* values)
{
    bpf_map* map = bpf_object__find_map_by_name(obj, name);
    if (map == nullptr || bpf_map__max_entries(map) != entries || bpf_map__value_size(map) != value_size)
        fail_load(obj, dir, fmt::format("the specialised program's map {} does not fit the policy's tables", name),
                  EINVAL);
    try {
        fill_array(bpf_map__fd(map), name, value_size, static_cast<std::uint32_t>(entries), values);
    } catch (...) {
        bpf_object__close(obj);
        remove_pins(dir);
        throw;
    }
}

// Programs in a "?lsm/HOOK" section are for hooks that older kernels lack (inode_set_acl
// before 6.2, file_ioctl_compat before 6.8): each is loaded only when the kernel's BTF has
// the hook (bpf_lsm_HOOK), so that 6.1 can load the rest.
void enable_optional_hooks(bpf_object* obj, const std::string& dir)
{
    constexpr std::string_view kLsm = "lsm/"; // libbpf drops the "?" and clears autoload
    btf* vmlinux = btf__load_vmlinux_btf();
    if (vmlinux == nullptr)
        fail_load(obj, dir, "cannot read the kernel's BTF (/sys/kernel/btf/vmlinux) to find its LSM hooks", errno);
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, obj)
    {
        const std::string_view section = bpf_program__section_name(prog);
        if (bpf_program__autoload(prog) || !section.starts_with(kLsm))
            continue;
        const std::string func = "bpf_lsm_" + std::string(section.substr(kLsm.size()));
        if (btf__find_by_name_kind(vmlinux, func.c_str(), BTF_KIND_FUNC) >= 0)
            bpf_program__set_autoload(prog, true);
    }
    btf__free(vmlinux);
}

// Attaches every loaded LSM program of the object (the specialised backend leaves out the
// hooks its policy does not need) and pins each link as link_<program>.
void attach_all(bpf_object* obj, const std::string& dir)
{
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, obj)
    {
        if (!bpf_program__autoload(prog))
            continue;
        const std::string name = bpf_program__name(prog);
        bpf_link* link = bpf_program__attach_lsm(prog);
        const int attach_err = link ? 0 : errno;
        if (link == nullptr || bpf_link__pin(link, (dir + "/link_" + name).c_str()) != 0) {
            const int err = link ? errno : attach_err;
            if (link)
                bpf_link__destroy(link);
            fail_load(obj, dir, "cannot attach the LSM program " + name, err);
        }
        // The pin holds the link; our handle can go.
        bpf_link__disconnect(link);
        bpf_link__destroy(link);
    }
}

// What load_and_pin loads: a policy's program, or the generic program of nested sandboxes.
struct ProgramImage {
    std::span<const std::byte> elf;
    // A specialised program's own tables, filled before any hook is attached; null for the
    // generic program, whose tables are per sandbox.
    const MapTables* own_tables = nullptr;
    std::string min_kernel; // for the message when the kernel refuses it
};

void load_and_pin(const ProgramImage& image, const std::string& dir)
{
    // A load that died half-way leaves pins without the sandbox table's: start over.
    remove_pins(dir);
    make_private_dir(dir);

    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "bumblewrap");
    bpf_object* obj = bpf_object__open_mem(image.elf.data(), image.elf.size(), &opts);
    if (obj == nullptr) {
        const int err = errno;
        remove_pins(dir);
        fail_errno("cannot open the policy's BPF object (is it a policy.o from bwc?)", err);
    }
    enable_optional_hooks(obj, dir);
    if (const int err = bpf_object__load(obj); err != 0) {
        bpf_object__close(obj);
        remove_pins(dir);
        const auto lsms = active_lsms();
        // With the BPF LSM active, EINVAL is the verifier's refusal, not a missing LSM.
        const bool lsm_missing = lsms ? lsms->find("bpf") == std::string::npos : err == -EINVAL;
        if (err == -EPERM || lsm_missing)
            throw CannotEnforce(bpf_lsm_missing_message(lsms));
        fail_errno(fmt::format("cannot load the enforcement program on {} (run with LIBBPF_LOG=debug for the "
                               "verifier log)",
                               running_kernel(image.min_kernel)),
                   -err);
    }
    const bool specialised = image.own_tables != nullptr;
    // The generic program's per-sandbox decisions, or a specialised program's when they
    // were too many for code.
    const bool has_accepts = bpf_object__find_map_by_name(obj, kAccepts) != nullptr;
    if (specialised) {
        const auto& tables = *image.own_tables;
        fill_program_array(obj, dir, kTrans, sizeof(std::uint32_t), tables.trans.size(), tables.trans.data());
        if (has_accepts)
            fill_program_array(obj, dir, kAccepts, sizeof(bw_accept), tables.accepts.size(), tables.accepts.data());
        fill_program_array(obj, dir, kLinks, sizeof(bw_link), tables.links.size(), tables.links.data());
    }
    pin_map(obj, dir, kTrans);
    pin_map(obj, dir, kLinks);
    pin_map(obj, dir, kEvents);
    if (has_accepts)
        pin_map(obj, dir, kAccepts);
    if (!specialised) {
        pin_map(obj, dir, kNet);
        pin_map(obj, dir, kNetRules);
        pin_map(obj, dir, kDevices);
    }
    pin_map(obj, dir, kCgFilter);
    attach_all(obj, dir);
    pin_map(obj, dir, kSandboxes);
    // The pins hold the program, maps and links; our handles can go.
    bpf_object__close(obj);
}

// Loads the program into `dir` unless a sandbox runs it there already.
void load_once(const ProgramImage& image, const std::string& dir)
{
    ensure_bpffs();
    make_private_dir(kPinRoot);
    if (!is_loaded(dir))
        load_and_pin(image, dir);
}

int create_inner_array(const char* name, std::uint32_t value_size, std::uint32_t entries, const void* values)
{
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
    const int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(std::uint32_t), value_size, entries, &opts);
    if (fd < 0)
        fail_errno(fmt::format("cannot create map {} ({} entries)", name, entries));
    try {
        fill_array(fd, name, value_size, entries, values);
    } catch (...) {
        close(fd);
        throw;
    }
    return fd;
}

void put_inner(int outer, std::uint64_t key, int inner, const char* what)
{
    if (bpf_map_update_elem(outer, &key, &inner, BPF_NOEXIST) != 0)
        fail_errno(fmt::format("cannot register the sandbox's {} map", what));
}

// --- network tables of the map backend: bw_net and bw_net_rules, keyed by cgroup id ---

// Installs the sandbox's network tables; they must be in place before its sandbox entry.
void install_net(const std::string& dir, std::uint64_t cgroup_id, const NetTables& net)
{
    // An array map needs an entry; policy.nrules keeps the kernel from reading it.
    std::vector<bw_net_rule> rules = net.rules;
    if (rules.empty())
        rules.emplace_back();
    const int inner = create_inner_array(kNetRules, sizeof(bw_net_rule), static_cast<std::uint32_t>(rules.size()),
                                         rules.data());
    const int outer = bpf_obj_get((dir + "/" + kNetRules).c_str());
    const int policy = bpf_obj_get((dir + "/" + kNet).c_str());
    const int err = errno;
    auto close_all = [&] {
        for (const int fd : {inner, outer, policy}) {
            if (fd >= 0)
                close(fd);
        }
    };
    if (outer < 0 || policy < 0) {
        close_all();
        fail_errno("cannot open the pinned network maps in " + dir, err);
    }
    try {
        put_inner(outer, cgroup_id, inner, "network rule");
        if (bpf_map_update_elem(policy, &cgroup_id, &net.policy, BPF_NOEXIST) != 0)
            fail_errno("cannot register the sandbox's network policy");
    } catch (...) {
        close_all();
        throw;
    }
    close_all();
}

void uninstall_net(const std::string& dir, std::uint64_t cgroup_id)
{
    for (const char* name : {kNet, kNetRules}) {
        const int fd = bpf_obj_get((dir + "/" + name).c_str());
        if (fd >= 0) {
            bpf_map_delete_elem(fd, &cgroup_id);
            close(fd);
        }
    }
}

// --- device rules of the map backend: bw_devices, keyed by cgroup id ---

void install_devices(const std::string& dir, std::uint64_t cgroup_id, const DeviceTables& devices)
{
    // An array map needs an entry; a rule that decides no access kind matches nothing.
    std::vector<bw_device_rule> rules = devices.rules;
    if (rules.empty())
        rules.emplace_back();
    const int inner = create_inner_array(kDevices, sizeof(bw_device_rule), static_cast<std::uint32_t>(rules.size()),
                                         rules.data());
    const int outer = bpf_obj_get((dir + "/" + kDevices).c_str());
    const int err = errno;
    if (outer < 0) {
        close(inner);
        fail_errno("cannot open the pinned device map in " + dir, err);
    }
    try {
        put_inner(outer, cgroup_id, inner, "device rule");
    } catch (...) {
        close(inner);
        close(outer);
        throw;
    }
    close(inner);
    close(outer);
}

void uninstall_devices(const std::string& dir, std::uint64_t cgroup_id)
{
    const int fd = bpf_obj_get((dir + "/" + kDevices).c_str());
    if (fd >= 0) {
        bpf_map_delete_elem(fd, &cgroup_id);
        close(fd);
    }
}

} // namespace

StateLock::StateLock()
{
    make_private_dir(kStateDir);
    fd_ = open(kLockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0)
        fail_errno(std::string("cannot open ") + kLockFile);
    if (flock(fd_, LOCK_EX) != 0)
        fail_errno(std::string("cannot lock ") + kLockFile);
}

StateLock::~StateLock()
{
    close(fd_);
}

Enforcer Enforcer::open(const artifact::Artifact& artifact)
{
    // One folder per program build, so different bumblewrap versions never share maps.
    const std::string dir = fmt::format("{}/abi{}-{:016x}", kPinRoot, BW_ABI_VERSION, artifact.program_id);
    const bool specialised = artifact.policy.backend == artifact::Backend::C;
    load_once({artifact.elf, specialised ? &artifact.policy.tables : nullptr, artifact.policy.kernel.min_kernel}, dir);
    // The specialised program's transitions are its own; the map backend's are per sandbox.
    if (specialised)
        return Enforcer(dir, pinned(dir, kSandboxes), {}, pinned(dir, kEvents));
    return Enforcer(dir, pinned(dir, kSandboxes), {pinned(dir, kTrans), pinned(dir, kAccepts), pinned(dir, kLinks)},
                    pinned(dir, kEvents));
}

Enforcer Enforcer::open_nested(int depth, const std::string& min_kernel)
{
    const auto generic = embedded::generic_bpf;
    const std::string dir = fmt::format("{}/abi{}-{:016x}-nest{}", kPinRoot, BW_ABI_VERSION,
                                        artifact::program_id(generic), depth);
    load_once({generic, nullptr, min_kernel}, dir);
    return Enforcer(dir, pinned(dir, kSandboxes), {pinned(dir, kTrans), pinned(dir, kAccepts), pinned(dir, kLinks)},
                    pinned(dir, kEvents));
}

Enforcer Enforcer::reopen(const std::string& pin_dir)
{
    // Per-sandbox tables exist only in the map backend; a specialised program's pinned
    // arrays are its own and hold no sandbox's entry.
    auto per_sandbox = [&](const char* name) {
        const int fd = bpf_obj_get((pin_dir + "/" + name).c_str());
        bpf_map_info info{};
        std::uint32_t len = sizeof info;
        if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || info.type != BPF_MAP_TYPE_HASH_OF_MAPS)) {
            close(fd);
            return -1;
        }
        return fd;
    };
    const int sandboxes = pinned(pin_dir, kSandboxes);
    return Enforcer(pin_dir, sandboxes, {per_sandbox(kTrans), per_sandbox(kAccepts), per_sandbox(kLinks)},
                    pinned(pin_dir, kEvents));
}

Enforcer::Enforcer(std::string pin_dir, int sandboxes, SandboxTables tables, int events)
    : pin_dir_(std::move(pin_dir)), sandboxes_(sandboxes), tables_(tables), events_(events)
{
}

Enforcer::Enforcer(Enforcer&& o) noexcept
    : pin_dir_(std::move(o.pin_dir_)), sandboxes_(o.sandboxes_), tables_(o.tables_), events_(o.events_)
{
    o.sandboxes_ = o.events_ = -1;
    o.tables_ = {};
}

Enforcer::~Enforcer()
{
    for (const int fd : {sandboxes_, tables_.trans, tables_.accepts, tables_.links, events_}) {
        if (fd >= 0)
            close(fd);
    }
}

int Enforcer::install(std::uint64_t cgroup_id, const MapTables& t)
{
    const bool per_sandbox_tables = tables_.trans >= 0;
    SandboxTables inner;
    // The outer maps hold the inner ones; our handles go either way.
    auto close_tables = [&] {
        for (const int fd : {inner.trans, inner.accepts, inner.links}) {
            if (fd >= 0)
                close(fd);
        }
    };
    try {
        if (per_sandbox_tables) {
            inner.trans = create_inner_array(kTrans, sizeof(std::uint32_t), static_cast<std::uint32_t>(t.trans.size()),
                                             t.trans.data());
            inner.accepts = create_inner_array(kAccepts, sizeof(bw_accept),
                                               static_cast<std::uint32_t>(t.accepts.size()), t.accepts.data());
            inner.links = create_inner_array(kLinks, sizeof(bw_link), static_cast<std::uint32_t>(t.links.size()),
                                             t.links.data());
        }
    } catch (...) {
        close_tables();
        throw;
    }
    const int events = bpf_map_create(BPF_MAP_TYPE_RINGBUF, kEvents, 0, 0, BW_EVENTS_BYTES, nullptr);
    if (events < 0) {
        const int err = errno;
        close_tables();
        fail_errno("cannot create the sandbox's denial ring buffer", err);
    }
    try {
        if (per_sandbox_tables) {
            put_inner(tables_.trans, cgroup_id, inner.trans, "transition");
            put_inner(tables_.accepts, cgroup_id, inner.accepts, "decision");
            put_inner(tables_.links, cgroup_id, inner.links, "decision chain");
            install_net(pin_dir_, cgroup_id, t.net);
            install_devices(pin_dir_, cgroup_id, t.devices);
        }
        put_inner(events_, cgroup_id, events, "event");
        bw_sandbox sandbox = t.sandbox;
        sandbox.id = cgroup_id;
        sandbox.mnt_ns = namespace_inode("mnt");
        sandbox.user_ns = namespace_inode("user");
        admit_cgroup(pin_dir_, cgroup_id);
        if (bpf_map_update_elem(sandboxes_, &cgroup_id, &sandbox, BPF_NOEXIST) != 0)
            fail_errno("cannot register the sandbox");
    } catch (...) {
        uninstall(cgroup_id);
        close_tables();
        close(events);
        throw;
    }
    close_tables();
    return events;
}

void Enforcer::install_alias(std::uint64_t alias, std::uint64_t existing)
{
    // Every per-sandbox map of this program, keyed by cgroup id, holds the existing
    // sandbox's entry: an inner map, or a value. The sandbox entry, copied last, keeps the
    // existing one's id. A specialised program's own tables are arrays, and stay as they are.
    try {
        admit_cgroup(pin_dir_, alias);
        for (const char* name : {kTrans, kAccepts, kLinks, kNet, kNetRules, kDevices, kEvents, kSandboxes}) {
            const int fd = bpf_obj_get((pin_dir_ + "/" + name).c_str());
            if (fd < 0)
                continue; // the map backend's tables, in a specialised program
            bpf_map_info info{};
            std::uint32_t len = sizeof info;
            bool ok = bpf_obj_get_info_by_fd(fd, &info, &len) == 0;
            const bool per_sandbox = ok && info.key_size == sizeof existing &&
                                     (info.type == BPF_MAP_TYPE_HASH || info.type == BPF_MAP_TYPE_HASH_OF_MAPS);
            std::vector<std::byte> value(ok ? info.value_size : 0);
            if (per_sandbox)
                ok = bpf_map_lookup_elem(fd, &existing, value.data()) == 0;
            if (per_sandbox && ok && info.type == BPF_MAP_TYPE_HASH_OF_MAPS) {
                // A lookup from user space gives the inner map's id; an update takes its fd.
                std::uint32_t id = 0;
                std::memcpy(&id, value.data(), sizeof id);
                const int inner = bpf_map_get_fd_by_id(id);
                ok = inner >= 0 && bpf_map_update_elem(fd, &alias, &inner, BPF_NOEXIST) == 0;
                if (inner >= 0)
                    close(inner);
            } else if (per_sandbox && ok) {
                ok = bpf_map_update_elem(fd, &alias, value.data(), BPF_NOEXIST) == 0;
            }
            const int err = errno;
            close(fd);
            if (!ok)
                fail_errno(fmt::format("cannot give the nested sandbox the entry of {} in {}", name, pin_dir_), err);
        }
    } catch (...) {
        uninstall(alias);
        throw;
    }
}

void Enforcer::uninstall(std::uint64_t cgroup_id)
{
    // Sandbox entry first: from then on the program ignores the cgroup.
    for (const int map : {sandboxes_, tables_.trans, tables_.accepts, tables_.links, events_}) {
        if (map >= 0)
            bpf_map_delete_elem(map, &cgroup_id);
    }
    if (tables_.trans >= 0) {
        uninstall_net(pin_dir_, cgroup_id);
        uninstall_devices(pin_dir_, cgroup_id);
    }
}

void Enforcer::unload_if_unused()
{
    std::uint64_t key = 0;
    if (bpf_map_get_next_key(sandboxes_, nullptr, &key) == 0)
        return;
    remove_pins(pin_dir_);
    rmdir(kPinRoot); // only if no other build's pins are left
}

} // namespace bw::rt
