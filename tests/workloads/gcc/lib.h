#ifndef LIB_H
#define LIB_H
void greet(const char *who);
int sum(int n);
#endif
