/* A setuid-root helper for the privilege attempts (built and made setuid by
 * run_security.sh, outside the sandbox): "read PATH" prints the file, "kill PID" signals it.
 * It prints its effective uid first, so that a control shows the setuid bit took. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if (argc != 3)
		return 2;
	printf("euid %d\n", (int)geteuid());
	fflush(stdout);
	if (strcmp(argv[1], "kill") == 0)
		return kill(atoi(argv[2]), SIGTERM) == 0 ? 0 : 1;
	fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	return 0;
}
