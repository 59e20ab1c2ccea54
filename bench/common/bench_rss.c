#include "bench_rss.h"

#include "bench_report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

size_t bench_rss_bytes(void)
{
    /* open/read into a stack buffer: stdio would allocate a FILE. */
    int fd;
    do
        fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        bench_check_failed("cannot open /proc/self/statm: %s", strerror(errno));
    char text[256];
    ssize_t length;
    do
        length = read(fd, text, sizeof text - 1);
    while (length < 0 && errno == EINTR);
    close(fd);
    if (length <= 0)
        bench_check_failed("cannot read /proc/self/statm");
    text[length] = '\0';
    /* "size resident shared text lib data dt", in pages. */
    char *end;
    strtoull(text, &end, 10);
    unsigned long long resident = strtoull(end, &end, 10);
    if (*end != ' ')
        bench_check_failed("unexpected /proc/self/statm contents: %s", text);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

size_t bench_peak_rss_bytes(void)
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        bench_check_failed("getrusage: %s", strerror(errno));
    return (size_t)usage.ru_maxrss * 1024;
}
