/*
 * The benchmarks' timer, in one static program so that it reads nothing from the host's
 * shared root while it runs:
 *
 *   bench_io open DIR     open, read and close every file of DIR's subfolders (one level
 *                         down), in name order
 *   bench_io walk DIR N   N passes of a recursive walk of DIR with lstat on every entry
 *   bench_io run CMD...   runs CMD, its standard output to /dev/null
 *
 * Prints the nanoseconds the work took (CLOCK_MONOTONIC), then the files it touched or
 * CMD's exit status, so that the driver can check that every mode did the same work.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (no . and ..), sorted; NULL on error. */
static char **list_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown;

			cap = cap ? 2 * cap : 256;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				exit(1);
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (!names[n++])
			exit(1);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	*count = n;
	return names;
}

/* The file paths to open, built before the clock starts. */
static char **open_plan(const char *dir, size_t *count)
{
	size_t nsub, k, i, nfiles, n = 0;
	char **subs = list_dir(dir, &nsub), **paths = NULL, **files, sub[4096];

	if (!subs)
		return NULL;
	for (k = 0; k < nsub; k++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[k]);
		files = list_dir(sub, &nfiles);
		if (!files)
			return NULL;
		paths = realloc(paths, (n + nfiles) * sizeof(*paths));
		if (!paths)
			exit(1);
		for (i = 0; i < nfiles; i++) {
			if (asprintf(&paths[n++], "%s/%s", sub, files[i]) < 0)
				exit(1);
		}
	}
	*count = n;
	return paths;
}

static long walked;

static int on_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct stat again;

	(void)st, (void)type, (void)ftw;
	if (lstat(path, &again) != 0)
		return 1;
	walked++;
	return 0;
}

extern char **environ;

/* Runs argv with its standard output on /dev/null; prints "NS STATUS". */
static int run(char **argv)
{
	posix_spawn_file_actions_t io;
	long long start, ns;
	int status;
	pid_t pid;

	posix_spawn_file_actions_init(&io);
	posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
	start = now_ns();
	if (posix_spawnp(&pid, argv[0], &io, NULL, argv, environ) != 0) {
		perror(argv[0]);
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	ns = now_ns() - start;
	printf("%lld %d\n", ns, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int main(int argc, char **argv)
{
	char buf[4096];
	long long start, ns;
	size_t count, i;
	char **paths;
	int fd, passes, p;

	if (argc == 3 && strcmp(argv[1], "open") == 0) {
		paths = open_plan(argv[2], &count);
		if (!paths) {
			perror(argv[2]);
			return 1;
		}
		start = now_ns();
		for (i = 0; i < count; i++) {
			fd = open(paths[i], O_RDONLY);
			if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
				perror(paths[i]);
				return 1;
			}
			close(fd);
		}
		ns = now_ns() - start;
		printf("%lld %zu\n", ns, count);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "walk") == 0) {
		passes = atoi(argv[3]);
		start = now_ns();
		for (p = 0; p < passes; p++) {
			if (nftw(argv[2], on_entry, 64, FTW_PHYS) != 0) {
				perror(argv[2]);
				return 1;
			}
		}
		ns = now_ns() - start;
		printf("%lld %ld\n", ns, walked);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "run") == 0)
		return run(argv + 2);
	fprintf(stderr, "usage: bench_io open DIR | bench_io walk DIR PASSES | bench_io run COMMAND [ARGS...]\n");
	return 2;
}
