/* The ways a process image ends without running destructors: the exec
 * family and _exit. The observer saves its results first. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "interpose_core.h"
#include "next_alloc.h"
#include "observer.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);

static int exec_result(int result)
{
    int saved = errno;
    observer_exec_failed();
    errno = saved;
    return result;
}

INTERPOSER_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn next = (execve_fn)next_symbol("execve");
    observer_image_ending(true);
    return exec_result(next(path, argv, envp));
}

INTERPOSER_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn next = (execve_fn)next_symbol("execvpe");
    observer_image_ending(true);
    return exec_result(next(file, argv, envp));
}

INTERPOSER_EXPORT int execv(const char *path, char *const argv[])
{
    execv_fn next = (execv_fn)next_symbol("execv");
    observer_image_ending(true);
    return exec_result(next(path, argv));
}

INTERPOSER_EXPORT int execvp(const char *file, char *const argv[])
{
    execv_fn next = (execv_fn)next_symbol("execvp");
    observer_image_ending(true);
    return exec_result(next(file, argv));
}

INTERPOSER_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn next = (fexecve_fn)next_symbol("fexecve");
    observer_image_ending(true);
    return exec_result(next(fd, argv, envp));
}

/* The list forms gather their arguments into an array on the stack (no
 * malloc) and call the vector forms above. */
static size_t count_list(const char *first, va_list args)
{
    size_t count = 1;
    while (first != NULL && va_arg(args, const char *) != NULL)
        count++;
    return count;
}

static void fill_list(char **argv, const char *first, va_list args)
{
    size_t i = 0;
    argv[i] = (char *)first;
    while (argv[i] != NULL)
        argv[++i] = va_arg(args, char *);
}

INTERPOSER_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    size_t count = count_list(arg, args);
    va_end(args);
    char *argv[count + 1];
    va_start(args, arg);
    fill_list(argv, arg, args);
    va_end(args);
    return execv(path, argv);
}

INTERPOSER_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    size_t count = count_list(arg, args);
    va_end(args);
    char *argv[count + 1];
    va_start(args, arg);
    fill_list(argv, arg, args);
    va_end(args);
    return execvp(file, argv);
}

INTERPOSER_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    size_t count = count_list(arg, args);
    char *const *envp = va_arg(args, char *const *);
    va_end(args);
    char *argv[count + 1];
    va_start(args, arg);
    fill_list(argv, arg, args);
    va_end(args);
    return execve(path, argv, envp);
}

INTERPOSER_EXPORT void _exit(int status)
{
    exit_fn next = (exit_fn)next_symbol("_exit");
    observer_image_ending(false);
    next(status);
    __builtin_unreachable();
}

INTERPOSER_EXPORT void _Exit(int status)
{
    _exit(status);
}
