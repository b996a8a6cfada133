/*
 * The Landlock mode of the benchmarks: runs a command restricted to the trees the
 * benchmark policy (bench.bwp) opens to it, with every file-system right this kernel's
 * Landlock knows handled.
 *
 *   bw-landlock [--ro PATH]... [--rw PATH]... -- COMMAND [ARGS...]
 *
 * --ro grants reading and executing under PATH, --rw every right.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The rights of each ABI version (Documentation/userspace-api/landlock.rst). */
static __u64 fs_rights(int abi)
{
	__u64 rights = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */

	if (abi >= 2)
		rights |= 1ULL << 13; /* LANDLOCK_ACCESS_FS_REFER */
	if (abi >= 3)
		rights |= 1ULL << 14; /* LANDLOCK_ACCESS_FS_TRUNCATE */
	if (abi >= 5)
		rights |= 1ULL << 15; /* LANDLOCK_ACCESS_FS_IOCTL_DEV */
	return rights;
}

static int add_tree(int ruleset, const char *path, __u64 rights)
{
	struct landlock_path_beneath_attr attr = { .allowed_access = rights };
	int err;

	attr.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (attr.parent_fd < 0) {
		fprintf(stderr, "bw-landlock: %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
	if (err)
		fprintf(stderr, "bw-landlock: cannot add %s: %s\n", path, strerror(errno));
	close(attr.parent_fd);
	return err;
}

int main(int argc, char **argv)
{
	const __u64 read_exec = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	struct landlock_ruleset_attr attr = { 0 };
	int abi, ruleset, i;
	__u64 all;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		fprintf(stderr, "bw-landlock: this kernel has no Landlock: %s\n", strerror(errno));
		return 125;
	}
	all = fs_rights(abi);
	attr.handled_access_fs = all;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		fprintf(stderr, "bw-landlock: cannot create a ruleset: %s\n", strerror(errno));
		return 125;
	}
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
		if (i + 1 >= argc || (strcmp(argv[i], "--ro") != 0 && strcmp(argv[i], "--rw") != 0)) {
			fprintf(stderr, "usage: bw-landlock [--ro PATH]... [--rw PATH]... -- COMMAND [ARGS...]\n");
			return 2;
		}
		if (add_tree(ruleset, argv[i + 1], strcmp(argv[i], "--ro") == 0 ? read_exec : all))
			return 125;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: bw-landlock [--ro PATH]... [--rw PATH]... -- COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, ruleset, 0)) {
		fprintf(stderr, "bw-landlock: cannot restrict itself: %s\n", strerror(errno));
		return 125;
	}
	close(ruleset);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "bw-landlock: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
