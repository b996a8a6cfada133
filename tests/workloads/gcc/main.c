#include <stdio.h>
#include "lib.h"

int main(void)
{
	greet("workload");
	printf("sum %d\n", sum(10));
	return 0;
}
