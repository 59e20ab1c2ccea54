#include "watchdog.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static const char *volatile watched;
static volatile long watched_step;
static volatile unsigned watched_seconds;

static void put(const char *s)
{
    ssize_t ignored = write(2, s, strlen(s));
    (void)ignored;
}

static void put_number(long n)
{
    char digits[24], *p = digits + sizeof digits;
    *--p = '\0';
    unsigned long u = n < 0 ? 0ul - (unsigned long)n : (unsigned long)n;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (n < 0)
        *--p = '-';
    put(p);
}

static void expired(int sig)
{
    (void)sig;
    put("watchdog: process ");
    put_number((long)getpid());
    put(", ");
    put(watched);
    put(" ");
    put_number(watched_step);
    put(": no progress for ");
    put_number((long)watched_seconds);
    put(" s (a hang)\n");
    _exit(WATCHDOG_STATUS);
}

void watchdog_arm(unsigned seconds, const char *what, long step)
{
    static volatile sig_atomic_t installed;
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = expired;
        sigaction(SIGALRM, &sa, NULL);
        installed = 1;
    }
    watched = what;
    watched_step = step;
    watched_seconds = seconds;
    alarm(seconds);
}

void watchdog_stop(void)
{
    alarm(0);
}
