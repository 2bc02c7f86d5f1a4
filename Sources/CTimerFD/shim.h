// timerfd(2) for Swift: Glibc's module leaves <sys/timerfd.h> out.
#include <sys/timerfd.h>
