/* test-composite.c - the suites run under valgrind memcheck and in the _FORTIFY_SOURCE build. */
#include "check.h"

/* Valgrind runs the program about fifty times slower, so the switch count is smaller; the FP
 * control test is left out because valgrind does not model MXCSR's FTZ/DAZ bits. */
int test_memcheck(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    check_pingpong(b, 10000);
    check_regs(b, 16);
    check_align(b);
    check_entry_return(b);
    check_stack_use(b);
    return test_copy_stack(b, 0, NULL);
}

/* Built into switch-tests-fortify, whose copy of the switch library is compiled with
 * -D_FORTIFY_SOURCE=2: there glibc turns _longjmp into __longjmp_chk, which aborts on a jump
 * to another stack unless the backend took care. */
int test_fortify(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
#if !defined(_FORTIFY_SOURCE) || _FORTIFY_SOURCE < 2
    check_fail(__FILE__, __LINE__, "this binary was not built with _FORTIFY_SOURCE=2");
#endif
    check_pingpong(b, 100000);
    check_regs(b, 64);
    check_align(b);
    check_entry_return(b);
    check_stack_use(b);
    return 0;
}
