/* no_uring.c - runs a command with io_uring_setup refused (EPERM), as a seccomp sandbox does. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Docker's default profile and other sandboxes refuse io_uring; the io_uring engines and the
 * uring model must then say "not run" with the reason (or exit with it), never crash or hang.
 * This wrapper installs a one-rule seccomp filter (io_uring_setup fails with EPERM) and runs
 * the command, so the tests can check that path on a machine where io_uring works.
 */
int main(int argc, char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (argc < 2) {
        fprintf(stderr, "usage: no-uring COMMAND [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        perror("no-uring: seccomp");
        return 1;
    }
    execvp(argv[1], argv + 1);
    perror("no-uring: exec");
    return 127;
}
