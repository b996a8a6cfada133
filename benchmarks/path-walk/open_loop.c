/*
 * open_loop PATH N [WARMUP]: opens PATH read-only and closes it N times, then prints the
 * nanoseconds per open()+close() pair, as measured by CLOCK_MONOTONIC (under qemu
 * -icount, guest instructions). WARMUP untimed pairs come first (default N/10, at least
 * 100): they fill the dentry cache and create the sandbox's per-task scratch buffer, so
 * that the timed pairs all take the same path through the kernel.
 *
 * Linked statically so that, once started, it touches no file but PATH (the benchmark
 * keeps PATH on a guest tmpfs: see benchmarks/path-walk/README.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long parse_count(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "open_loop: %s wants a non-negative number, got '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void open_close(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "open_loop: open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n, warmup, i;
	long long start, elapsed;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: open_loop PATH N [WARMUP]\n");
		return 2;
	}
	n = parse_count(argv[2], "N");
	if (n == 0) {
		fprintf(stderr, "open_loop: N must be at least 1\n");
		return 2;
	}
	warmup = argc == 4 ? parse_count(argv[3], "WARMUP") : (n / 10 > 100 ? n / 10 : 100);

	for (i = 0; i < warmup; i++)
		open_close(argv[1]);
	start = now_ns();
	for (i = 0; i < n; i++)
		open_close(argv[1]);
	elapsed = now_ns() - start;
	printf("%.1f\n", (double)elapsed / (double)n);
	return 0;
}
