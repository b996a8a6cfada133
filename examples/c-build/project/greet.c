#include <stdio.h>

#include "greet.h"

void greet(const char *who)
{
	printf("hello from the %s\n", who);
}
