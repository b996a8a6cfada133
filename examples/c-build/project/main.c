#include <stdio.h>

#include "greet.h"

int main(void)
{
	greet("sandboxed build");
	return 0;
}
