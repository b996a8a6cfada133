#include <stdio.h>
#include "lib.h"

void greet(const char *who)
{
	printf("hello %s\n", who);
}
