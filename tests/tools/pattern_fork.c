/* The parent allocates 3 blocks of 50 bytes and forks; the child allocates
 * and frees 7 blocks of 300 bytes, then execs the program named in argv[1]
 * (with argv[2]...). The parent frees its blocks after the child is done. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *parent_blocks[3];
    for (int i = 0; i < 3; i++)
        parent_blocks[i] = malloc(50);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        for (int i = 0; i < 7; i++)
            free(malloc(300));
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int status;
    waitpid(child, &status, 0);
    for (int i = 0; i < 3; i++)
        free(parent_blocks[i]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
