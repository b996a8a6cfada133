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
#include <array>
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
constexpr const char* kSyscalls = "bw_syscalls";   // the map backend only
constexpr const char* kLinks = "bw_links";
constexpr const char* kDevices = "bw_devices";     // the map backend only
constexpr const char* kDrops = "bw_drops";
constexpr const char* kBarrier = "bw_barrier";     // the map backend only

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
        pin_map(obj, dir, kSyscalls);
        pin_map(obj, dir, kDevices);
        pin_map(obj, dir, kBarrier);
    }
    pin_map(obj, dir, kCgFilter);
    pin_map(obj, dir, kDrops);
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

// The map backend's per-sandbox tables that are arrays of a size of their own, in the
// order of Enforcer::SandboxTables::outer.
constexpr std::array<const char*, 5> kSlotTables{kTrans, kAccepts, kLinks, kNetRules, kDevices};

// One table's contents: `count` entries of `value_size` bytes.
struct TableImage {
    std::uint32_t value_size = 0;
    std::uint32_t count = 0;
    const void* data = nullptr;
};

// The tables of `t` in the order of kSlotTables. An array map needs an entry: an empty rule
// list is one zero rule, which matches nothing (bw_net_policy.nrules keeps the kernel from
// reading a network rule; a device rule that decides no access kind matches nothing).
std::array<TableImage, 5> table_images(const MapTables& t)
{
    static const bw_net_rule no_net_rule{};
    static const bw_device_rule no_device_rule{};
    auto rules = [](const auto& v, const auto& none) {
        return v.empty() ? TableImage{sizeof none, 1, &none}
                         : TableImage{sizeof none, static_cast<std::uint32_t>(v.size()), v.data()};
    };
    return {TableImage{sizeof(std::uint32_t), static_cast<std::uint32_t>(t.trans.size()), t.trans.data()},
            TableImage{sizeof(bw_accept), static_cast<std::uint32_t>(t.accepts.size()), t.accepts.data()},
            TableImage{sizeof(bw_link), static_cast<std::uint32_t>(t.links.size()), t.links.data()},
            rules(t.net.rules, no_net_rule), rules(t.devices.rules, no_device_rule)};
}

// The image's entries, then zeros up to `capacity`: what an array that held a larger
// table before must hold now (a device rule past the last one would still be scanned).
std::vector<std::byte> padded(const TableImage& image, std::uint32_t capacity)
{
    std::vector<std::byte> out(std::size_t{capacity} * image.value_size);
    std::memcpy(out.data(), image.data, std::size_t{image.count} * image.value_size);
    return out;
}

// The inner map that a map-in-map holds under `key`, as a new descriptor; -1 when none.
int inner_map(int outer, std::uint64_t key)
{
    // A lookup from user space gives the inner map's id; an update takes its fd.
    std::uint32_t id = 0;
    if (bpf_map_lookup_elem(outer, &key, &id) != 0)
        return -1;
    return bpf_map_get_fd_by_id(id);
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
    return Enforcer(dir, pinned(dir, kSandboxes), sandbox_tables(dir), pinned(dir, kEvents));
}

std::string Enforcer::generic_pin_dir()
{
    return fmt::format("{}/abi{}-{:016x}", kPinRoot, BW_ABI_VERSION, artifact::program_id(embedded::generic_bpf));
}

Enforcer Enforcer::open_generic(const std::string& min_kernel)
{
    const std::string dir = generic_pin_dir();
    load_once({embedded::generic_bpf, nullptr, min_kernel}, dir);
    return Enforcer(dir, pinned(dir, kSandboxes), sandbox_tables(dir), pinned(dir, kEvents));
}

Enforcer Enforcer::open_nested(int depth, const std::string& min_kernel)
{
    const auto generic = embedded::generic_bpf;
    const std::string dir = fmt::format("{}/abi{}-{:016x}-nest{}", kPinRoot, BW_ABI_VERSION,
                                        artifact::program_id(generic), depth);
    load_once({generic, nullptr, min_kernel}, dir);
    return Enforcer(dir, pinned(dir, kSandboxes), sandbox_tables(dir), pinned(dir, kEvents));
}

Enforcer Enforcer::reopen(const std::string& pin_dir)
{
    // Per-sandbox tables exist only in the map backend; a specialised program's pinned
    // arrays are its own and hold no sandbox's entry.
    const int trans = bpf_obj_get((pin_dir + "/" + kTrans).c_str());
    bpf_map_info info{};
    std::uint32_t len = sizeof info;
    const bool per_sandbox = trans >= 0 && bpf_obj_get_info_by_fd(trans, &info, &len) == 0 &&
                             info.type == BPF_MAP_TYPE_HASH_OF_MAPS;
    if (trans >= 0)
        close(trans);
    const int sandboxes = pinned(pin_dir, kSandboxes);
    return Enforcer(pin_dir, sandboxes, per_sandbox ? sandbox_tables(pin_dir) : SandboxTables{},
                    pinned(pin_dir, kEvents));
}

Enforcer::SandboxTables Enforcer::sandbox_tables(const std::string& dir)
{
    SandboxTables t;
    for (std::size_t i = 0; i < kSlotTables.size(); ++i)
        t.outer[i] = pinned(dir, kSlotTables[i]);
    t.net = pinned(dir, kNet);
    t.syscalls = pinned(dir, kSyscalls);
    return t;
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
    for (const int fd : {sandboxes_, tables_.net, tables_.syscalls, events_}) {
        if (fd >= 0)
            close(fd);
    }
    for (const int fd : tables_.outer) {
        if (fd >= 0)
            close(fd);
    }
}

int Enforcer::install(std::uint64_t cgroup_id, const MapTables& t)
{
    bw_sandbox sandbox = t.sandbox;
    sandbox.id = cgroup_id;
    sandbox.tables = cgroup_id;
    sandbox.version = 0;
    sandbox.mnt_ns = namespace_inode("mnt");
    sandbox.user_ns = namespace_inode("user");
    const int events = bpf_map_create(BPF_MAP_TYPE_RINGBUF, kEvents, 0, 0, BW_EVENTS_BYTES, nullptr);
    if (events < 0)
        fail_errno("cannot create the sandbox's denial ring buffer");
    try {
        put_entry(cgroup_id, t, sandbox, events);
    } catch (...) {
        close(events);
        throw;
    }
    return events;
}

void Enforcer::adopt(std::uint64_t cgroup_id, const MapTables& t, const bw_sandbox& from, int ring)
{
    bw_sandbox sandbox = t.sandbox;
    sandbox.id = cgroup_id;
    sandbox.tables = cgroup_id;
    sandbox.version = from.version;
    // Paths are named in the namespaces the sandbox started in, not in the caller's.
    sandbox.mnt_ns = from.mnt_ns;
    sandbox.user_ns = from.user_ns;
    put_entry(cgroup_id, t, sandbox, ring);
}

void Enforcer::put_entry(std::uint64_t cgroup_id, const MapTables& t, const bw_sandbox& sandbox, int ring)
{
    try {
        if (replaceable())
            put_tables(sandbox.tables, t, false);
        put_inner(events_, cgroup_id, ring, "event");
        admit_cgroup(pin_dir_, cgroup_id);
        if (bpf_map_update_elem(sandboxes_, &cgroup_id, &sandbox, BPF_NOEXIST) != 0)
            fail_errno("cannot register the sandbox");
    } catch (...) {
        uninstall(cgroup_id);
        throw;
    }
}

std::string Enforcer::slot_pin(std::uint64_t key, const char* table) const
{
    return fmt::format("{}/slot-{:016x}-{}", pin_dir_, key, table);
}

void Enforcer::put_tables(std::uint64_t key, const MapTables& t, bool reuse)
{
    const auto images = table_images(t);
    for (std::size_t i = 0; i < images.size(); ++i) {
        const auto& image = images[i];
        const char* name = kSlotTables[i];
        const int outer = tables_.outer[i];
        const auto pin = slot_pin(key, name);
        // A slot's arrays are filled in place when they are big enough: an edit then waits
        // for no grace period here. Only the spare slot, which no hook reads, is reused.
        // Each array is pinned beside the program, which finds it faster than a lookup.
        if (const int inner = reuse ? bpf_obj_get(pin.c_str()) : -1; inner >= 0) {
            bpf_map_info info{};
            std::uint32_t len = sizeof info;
            const bool fits = bpf_obj_get_info_by_fd(inner, &info, &len) == 0 && info.max_entries >= image.count;
            if (fits) {
                try {
                    fill_array(inner, name, image.value_size, info.max_entries, padded(image, info.max_entries).data());
                } catch (...) {
                    close(inner);
                    throw;
                }
            }
            close(inner);
            if (fits)
                continue;
            bpf_map_delete_elem(outer, &key);
        }
        // Room to grow for the spare slot, whose tables later edits refill.
        const std::uint32_t capacity = reuse ? image.count + image.count / 2 + 16 : image.count;
        const int inner = create_inner_array(name, image.value_size, capacity, padded(image, capacity).data());
        unlink(pin.c_str());
        bool ok = bpf_obj_pin(inner, pin.c_str()) == 0 && bpf_map_update_elem(outer, &key, &inner, BPF_NOEXIST) == 0;
        if (!ok && errno == EEXIST) {
            // A sandbox or an edit that died half-way left this slot's table.
            bpf_map_delete_elem(outer, &key);
            ok = bpf_map_update_elem(outer, &key, &inner, BPF_NOEXIST) == 0;
        }
        const int err = errno;
        close(inner);
        if (!ok)
            fail_errno(fmt::format("cannot register the sandbox's {} map", name), err);
    }
    if (bpf_map_update_elem(tables_.net, &key, &t.net.policy, BPF_ANY) != 0)
        fail_errno("cannot register the sandbox's network policy");
    // Absent while nothing is denied: the hooks then stop at the lookup.
    if (t.syscalls.denied == 0)
        bpf_map_delete_elem(tables_.syscalls, &key);
    else if (bpf_map_update_elem(tables_.syscalls, &key, &t.syscalls, BPF_ANY) != 0)
        fail_errno("cannot register the sandbox's live syscall rules");
}

void Enforcer::drop_tables(std::uint64_t key)
{
    // A slot's pins say which of its arrays exist: deleting a missing entry would wait for
    // a grace period all the same.
    for (std::size_t i = 0; i < kSlotTables.size(); ++i) {
        const auto pin = slot_pin(key, kSlotTables[i]);
        if (access(pin.c_str(), F_OK) == 0) {
            bpf_map_delete_elem(tables_.outer[i], &key);
            unlink(pin.c_str());
        }
    }
    bpf_map_delete_elem(tables_.net, &key);
    bpf_map_delete_elem(tables_.syscalls, &key);
}

void Enforcer::grace_period()
{
    const int outer = pinned(pin_dir_, kBarrier);
    const int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, kBarrier, sizeof(std::uint32_t), sizeof(std::uint32_t), 1,
                                     nullptr);
    const std::uint32_t zero = 0;
    const bool ok = inner >= 0 && bpf_map_update_elem(outer, &zero, &inner, BPF_ANY) == 0;
    const int err = errno;
    if (inner >= 0)
        close(inner);
    close(outer);
    if (!ok)
        fail_errno("cannot wait for the programs that read the sandbox's previous policy", err);
}

std::optional<bw_sandbox> Enforcer::entry(std::uint64_t cgroup_id) const
{
    bw_sandbox sandbox{};
    if (bpf_map_lookup_elem(sandboxes_, &cgroup_id, &sandbox) != 0)
        return std::nullopt;
    return sandbox;
}

int Enforcer::ring(std::uint64_t cgroup_id) const
{
    const int fd = inner_map(events_, cgroup_id);
    if (fd < 0)
        fail_errno("cannot open the sandbox's denial ring buffer in " + pin_dir_);
    return fd;
}

void Enforcer::replace(std::uint64_t cgroup_id, const MapTables& t, std::uint32_t version)
{
    const auto old = entry(cgroup_id);
    if (!old || old->id != cgroup_id)
        throw Failure(fmt::format("the program in {} no longer holds the sandbox's policy", pin_dir_));
    bw_sandbox next = t.sandbox;
    next.id = cgroup_id;
    next.tables = old->tables ^ BW_TABLES_ALT;
    next.version = version;
    next.mnt_ns = old->mnt_ns;
    next.user_ns = old->user_ns;
    // The spare slot: no hook reads it since the last edit's grace period.
    put_tables(next.tables, t, true);
    // The sandbox's own entry, then those of the nested sandboxes it decides (aliases
    // carry its id). After each, a grace period: an entry replaced may be reused by the
    // next update at once, so no hook may still be reading it by then; and after the
    // last, no hook reads the old slot, which the next edit fills.
    std::vector<std::uint64_t> keys{cgroup_id};
    std::uint64_t key = 0, *prev = nullptr;
    while (bpf_map_get_next_key(sandboxes_, prev, &key) == 0) {
        if (const auto e = entry(key); e && e->id == cgroup_id && key != cgroup_id)
            keys.push_back(key);
        prev = &key;
    }
    for (const auto k : keys) {
        if (bpf_map_update_elem(sandboxes_, &k, &next, BPF_EXIST) != 0)
            fail_errno("cannot replace the sandbox's policy");
        grace_period();
    }
}

std::uint64_t Enforcer::dropped(std::uint64_t cgroup_id) const
{
    const int fd = bpf_obj_get((pin_dir_ + "/" + kDrops).c_str());
    std::uint64_t count = 0;
    if (fd >= 0) {
        bpf_map_lookup_elem(fd, &cgroup_id, &count);
        close(fd);
    }
    return count;
}

void Enforcer::install_alias(std::uint64_t alias, std::uint64_t existing)
{
    // The alias gets the existing sandbox's ring and then its entry, which keeps the
    // existing one's id and tables key: it is decided by the same tables.
    try {
        admit_cgroup(pin_dir_, alias);
        for (const char* name : {kEvents, kSandboxes}) {
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
    const auto e = entry(cgroup_id);
    // Sandbox entry first: from then on the program ignores the cgroup.
    bpf_map_delete_elem(sandboxes_, &cgroup_id);
    bpf_map_delete_elem(events_, &cgroup_id);
    if (const int drops = bpf_obj_get((pin_dir_ + "/" + kDrops).c_str()); drops >= 0) {
        bpf_map_delete_elem(drops, &cgroup_id);
        close(drops);
    }
    // A nested sandbox's alias uses its enclosing sandbox's tables, which stay.
    if (!replaceable() || (e && e->id != cgroup_id))
        return;
    drop_tables(cgroup_id);
    drop_tables(cgroup_id | BW_TABLES_ALT);
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
