/* test-forge.c - a forged resume address faults instead of running, where a backend declares it. */
#include "check.h"
#include "switch_asm_frame.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * A suspended context's resume address lies in writable memory: overwriting it is the
 * classic way to take over a coroutine library. A backend that declares signs_resume
 * (aarch64 asm built with pac-ret) must turn the overwrite into a fault. The test forges the
 * slot where the asm frame keeps that address (priv.words[SW_ASM_WORD_RESUME]); a backend
 * that declared the property but kept the address elsewhere would resume normally and fail
 * here, as would one that stores but does not check the signature.
 */

/* Does this CPU sign pointers at all? pacia1716 is a hint: without PAC it leaves x17 alone. */
static bool cpu_signs_pointers(void)
{
#if defined(__aarch64__)
    register uintptr_t x17 __asm__("x17") = (uintptr_t)&cpu_signs_pointers;
    register uintptr_t x16 __asm__("x16") = 0;
    __asm__("hint #8" : "+r"(x17) : "r"(x16)); /* pacia1716 */
    return x17 != (uintptr_t)&cpu_signs_pointers;
#else
    return false;
#endif
}

#define HIJACKED "the forged resume address ran\n"

static void hijack(void)
{
    if (write(STDERR_FILENO, HIJACKED, sizeof HIJACKED - 1) < 0) _exit(4);
    _exit(3);
}

struct forge {
    check_pair pair;
    size_t stack_size;
    bool forge;
};

static void peer_entry(void *arg)
{
    struct forge *f = arg;
    sw_jump(&f->pair.peer, &f->pair.main);
    fprintf(stderr, "the peer resumed in its own code\n");
}

/* In the child: suspend a peer inside a switch, optionally forge its resume slot, resume it. */
static void resume_child(void *arg)
{
    struct forge *f = arg;
    check_pair_init(&f->pair, f->pair.main.backend, f->stack_size, peer_entry, f);
    sw_jump(&f->pair.main, &f->pair.peer);
    if (f->forge) f->pair.peer.priv.words[SW_ASM_WORD_RESUME] = (void *)hijack;
    sw_jump(&f->pair.main, &f->pair.peer);
    ASSERT_EQ(sw_finished(&f->pair.peer), true);
}

static void run(const sw_backend *b, bool forge, size_t stack_size, check_child *child)
{
    struct forge f = {.forge = forge, .stack_size = stack_size};
    f.pair.main.backend = b;
    check_run_child(resume_child, &f, child);
    char how[64];
    printf("%s, resume address %s: child %s, stderr:\n%s", b->name, forge ? "forged" : "untouched",
           check_describe_status(child->status, how, sizeof how), child->err);
}

int test_forged_resume(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    if (!b->props.signs_resume) {
        printf("not run: %s does not declare signed resume addresses (signs_resume=0)\n", b->name);
        return CHECK_SKIP;
    }
    if (!cpu_signs_pointers()) {
        printf("not run: this CPU has no pointer authentication\n");
        return CHECK_SKIP;
    }
    check_child child;
    /* The control: left alone, the peer resumes where it stopped and finishes. */
    run(b, false, 64 * 1024, &child);
    ASSERT(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0);
    ASSERT_CONTAINS(child.err, "the peer resumed in its own code");
    /* Forged: the authentication fails, so the return faults (SIGSEGV on a poisoned address,
     * SIGILL where the CPU traps the failed authentication itself).
     *
     * A pointer authentication code is a few bits of the address (7 with a 48-bit address
     * space and the top byte ignored), so an unsigned address passes by chance once in 2^bits:
     * a proof run of CI under qemu-user met it once. The code depends on the stack pointer at
     * signing, so a forgery that ran is tried again with the peer on a stack of another size,
     * elsewhere. A backend that checks the signature stops the second or third try (all three
     * pass by chance once in 2^21); one that does not lets every try run. */
    enum { TRIES = 3 };
    for (size_t try = 1; try <= TRIES; try++) {
        run(b, true, try * 64 * 1024, &child);
        if (!strstr(child.err, HIJACKED)) break;
        printf("the forgery ran on a %zu KiB stack%s\n", try * 64,
               try < TRIES ? ": trying another" : "");
    }
    ASSERT(strstr(child.err, HIJACKED) == NULL);
    ASSERT(WIFSIGNALED(child.status));
    ASSERT(WTERMSIG(child.status) == SIGSEGV || WTERMSIG(child.status) == SIGILL);
    return 0;
}
