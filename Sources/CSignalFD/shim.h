// signalfd(2) for Swift: Glibc's module leaves <sys/signalfd.h> out.
#include <sys/signalfd.h>
