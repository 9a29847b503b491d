/* switch_aarch64_aapcs_elf_gas.S - context switch for AArch64, AAPCS64, ELF, GNU as. */

/*
 * What a suspended context keeps, in its sw_ctx (byte offsets from the start of sw_ctx):
 *
 *   +-------+--------+-------------------------------+---------------------------+
 *   | slot  | offset | asm                           | asm-nofpu                 |
 *   +-------+--------+-------------------------------+---------------------------+
 *   |  sp   |  0x00  | sp (the caller's; `bl` pushes | sp                        |
 *   |       |        | nothing)                      |                           |
 *   |  0    |  0x50  | resume address (x30), signed  | resume address (x30)      |
 *   |       |        | when built with pac-ret       |                           |
 *   |  1    |  0x58  | x29 (frame pointer)           | x29                       |
 *   |  2- 3 |  0x60  | x19, x20                      | x19, x20                  |
 *   |  4- 5 |  0x70  | x21, x22                      | x21, x22                  |
 *   |  6- 7 |  0x80  | x23, x24                      | x23, x24                  |
 *   |  8- 9 |  0x90  | x25, x26                      | x25, x26                  |
 *   | 10-11 |  0xa0  | x27, x28                      | x27, x28                  |
 *   | 12-13 |  0xb0  | d8, d9                        | d8, d9                    |
 *   | 14-15 |  0xc0  | d10, d11                      | d10, d11                  |
 *   | 16-17 |  0xd0  | d12, d13                      | d12, d13                  |
 *   | 18-19 |  0xe0  | d14, d15                      | d14, d15                  |
 *   | 20    |  0xf0  | FPCR                          | -                         |
 *   +-------+--------+-------------------------------+---------------------------+
 *
 * That is everything AAPCS64 makes callee-saved: x19-x28, the frame pointer x29, sp, the
 * low 64 bits of v8-v15 (d8-d15: the upper halves and v0-v7, v16-v31 are caller-saved),
 * and the FPCR's mode bits (rounding, flush-to-zero, default NaN, alternative half
 * precision), which a function may not change unless changing them is its purpose. The
 * FPSR's cumulative exception flags are not preserved across calls. x30 is the return
 * address, so it becomes the resume address. Everything else (x0-x18, the NZCV flags) is
 * dead at any call, including this one. x18 is the platform register, but Linux gives it
 * no special meaning, so it is caller-saved there. The offsets come from
 * switch_asm_frame.h, which switch_asm.c checks against the C struct. d8-d15 are kept by
 * both variants: they are ordinary callee-saved registers, not floating-point control
 * state, and dropping them would break any compiled code that keeps a double across a call.
 *
 * Why the registers go to sw_ctx and not onto the stack: the x86_64 file explains it; the
 * loads of `to` then depend only on x1, which is there from the start.
 *
 * Why `ret` and not `br x30`: under BTI (see below), an indirect `br` may only land on a
 * `bti j`/`bti jc` instruction, and the resume address is the instruction after some
 * caller's `bl`, which has none; `ret` sets no branch type and may land anywhere. The price
 * is the return-stack predictor: it predicts the return to the caller of this call, not to
 * the other context's, as on x86_64 (where the asm resumes with `jmp` for that reason).
 *
 * Branch Target Identification (BTI, Armv8.5): in pages mapped with PROT_BTI, an indirect
 * call (`blr`) must land on `bti c` or `paciasp`. sw_asm_jump is called indirectly through
 * the backend's operations table, so it starts with one of the two; sw__asm_entry is only
 * reached by `ret`, which needs no landing pad. The dynamic loader maps an object with
 * PROT_BTI only if every input of the link carried the BTI bit in its GNU property note,
 * so this file emits the note (at the end) whenever the compiler was asked for BTI: one .S
 * without it silently turns BTI off for the whole executable.
 *
 * Pointer authentication (PAC, Armv8.3): with pac-ret the compiler signs x30 before
 * spilling it, using sp as the modifier, and authenticates it before `ret`. The resume
 * address stored here is such a return address, lying in writable memory, so it is signed
 * the same way: `paciasp` on the way in, with the sp that the context will have when it
 * resumes, and `autiasp` after that sp is loaded again. A resume address overwritten in
 * memory then fails authentication and the `ret` faults instead of jumping there.
 * switch_asm.c signs a fresh context's first resume address with pacia1716 and that
 * context's sp. All of these are hint instructions: on cores without PAC (or BTI) they do
 * nothing, so one binary runs everywhere. Without -mbranch-protection none are emitted.
 */

#include "switch_asm_frame.h"

/* The landing pad and signing instructions the build asked for (-mbranch-protection). */
#if defined(__ARM_FEATURE_PAC_DEFAULT) && (__ARM_FEATURE_PAC_DEFAULT & 2)
#define SIGN_LR   pacibsp /* sign x30 with key B and sp; also a BTI landing pad */
#define AUTH_LR   autibsp /* authenticate x30 against sp */
#define SW_PAC    1
#elif defined(__ARM_FEATURE_PAC_DEFAULT)
#define SIGN_LR   paciasp /* sign x30 with key A and sp; also a BTI landing pad */
#define AUTH_LR   autiasp /* authenticate x30 against sp */
#define SW_PAC    1
#elif defined(__ARM_FEATURE_BTI_DEFAULT)
#define SIGN_LR   bti c   /* no signing: just the landing pad for `blr` */
#define SW_PAC    0
#else
#define SW_PAC    0
#endif

        .text

/* void sw_asm_jump(sw_ctx *from, sw_ctx *to): from in x0, to in x1. */
        .globl  sw_asm_jump
        .type   sw_asm_jump, %function
        .p2align 6                              /* one cache line: timing stays repeatable */
sw_asm_jump:
        .cfi_startproc
#ifdef SIGN_LR
        SIGN_LR                                 /* see the macros above */
#endif
#if SW_PAC
        .cfi_negate_ra_state                    /* (for unwinders: x30 is signed now) */
#endif
        mov     x9, sp                          /* sp cannot be stored directly */
        stp     x30, x29, [x0, #SW_ASM_LR]      /* slots 0-1: resume address, frame pointer */
        stp     x19, x20, [x0, #SW_ASM_X19]     /* slots 2-3 */
        stp     x21, x22, [x0, #SW_ASM_X21]     /* slots 4-5 */
        stp     x23, x24, [x0, #SW_ASM_X23]     /* slots 6-7 */
        stp     x25, x26, [x0, #SW_ASM_X25]     /* slots 8-9 */
        stp     x27, x28, [x0, #SW_ASM_X27]     /* slots 10-11 */
        stp     d8, d9, [x0, #SW_ASM_D8]        /* slots 12-13 */
        stp     d10, d11, [x0, #SW_ASM_D10]     /* slots 14-15 */
        stp     d12, d13, [x0, #SW_ASM_D12]     /* slots 16-17 */
        stp     d14, d15, [x0, #SW_ASM_D14]     /* slots 18-19 */
        mrs     x10, fpcr                       /* rounding, FZ, DN, AHP of `from` */
        str     x9, [x0, #SW_CTX_SP]            /* slot sp */
        str     x10, [x0, #SW_ASM_FPCR]         /* slot 20 */

        ldp     x30, x29, [x1, #SW_ASM_LR]      /* slots 0-1 of `to` */
        ldr     x9, [x1, #SW_CTX_SP]            /* to's sp */
        ldp     x19, x20, [x1, #SW_ASM_X19]     /* slots 2-3 */
        ldp     x21, x22, [x1, #SW_ASM_X21]     /* slots 4-5 */
        ldp     x23, x24, [x1, #SW_ASM_X23]     /* slots 6-7 */
        ldp     x25, x26, [x1, #SW_ASM_X25]     /* slots 8-9 */
        ldp     x27, x28, [x1, #SW_ASM_X27]     /* slots 10-11 */
        ldp     d8, d9, [x1, #SW_ASM_D8]        /* slots 12-13 */
        ldp     d10, d11, [x1, #SW_ASM_D10]     /* slots 14-15 */
        ldp     d12, d13, [x1, #SW_ASM_D12]     /* slots 16-17 */
        ldp     d14, d15, [x1, #SW_ASM_D14]     /* slots 18-19 */
        ldr     x10, [x1, #SW_ASM_FPCR]         /* slot 20 */
        mov     sp, x9                          /* from here on we are on to's stack */
        msr     fpcr, x10                       /* to's floating-point modes */
#if SW_PAC
        AUTH_LR                                 /* x30 checked against to's sp */
        .cfi_negate_ra_state                    /* (x30 is a plain address again) */
#endif
        ret                                     /* resume to; x1 still holds `to` */
        .cfi_endproc
        .size   sw_asm_jump, .-sw_asm_jump

/* void sw_asm_nofpu_jump(sw_ctx *from, sw_ctx *to): the same without slot 20. */
        .globl  sw_asm_nofpu_jump
        .type   sw_asm_nofpu_jump, %function
        .p2align 6                              /* one cache line: timing stays repeatable */
sw_asm_nofpu_jump:
        .cfi_startproc
#ifdef SIGN_LR
        SIGN_LR                                 /* see the macros above */
#endif
#if SW_PAC
        .cfi_negate_ra_state                    /* (for unwinders: x30 is signed now) */
#endif
        mov     x9, sp                          /* sp cannot be stored directly */
        stp     x30, x29, [x0, #SW_ASM_LR]      /* slots 0-1: resume address, frame pointer */
        stp     x19, x20, [x0, #SW_ASM_X19]     /* slots 2-3 */
        stp     x21, x22, [x0, #SW_ASM_X21]     /* slots 4-5 */
        stp     x23, x24, [x0, #SW_ASM_X23]     /* slots 6-7 */
        stp     x25, x26, [x0, #SW_ASM_X25]     /* slots 8-9 */
        stp     x27, x28, [x0, #SW_ASM_X27]     /* slots 10-11 */
        stp     d8, d9, [x0, #SW_ASM_D8]        /* slots 12-13 */
        stp     d10, d11, [x0, #SW_ASM_D10]     /* slots 14-15 */
        stp     d12, d13, [x0, #SW_ASM_D12]     /* slots 16-17 */
        stp     d14, d15, [x0, #SW_ASM_D14]     /* slots 18-19 */
        str     x9, [x0, #SW_CTX_SP]            /* slot sp */

        ldp     x30, x29, [x1, #SW_ASM_LR]      /* slots 0-1 of `to` */
        ldr     x9, [x1, #SW_CTX_SP]            /* to's sp */
        ldp     x19, x20, [x1, #SW_ASM_X19]     /* slots 2-3 */
        ldp     x21, x22, [x1, #SW_ASM_X21]     /* slots 4-5 */
        ldp     x23, x24, [x1, #SW_ASM_X23]     /* slots 6-7 */
        ldp     x25, x26, [x1, #SW_ASM_X25]     /* slots 8-9 */
        ldp     x27, x28, [x1, #SW_ASM_X27]     /* slots 10-11 */
        ldp     d8, d9, [x1, #SW_ASM_D8]        /* slots 12-13 */
        ldp     d10, d11, [x1, #SW_ASM_D10]     /* slots 14-15 */
        ldp     d12, d13, [x1, #SW_ASM_D12]     /* slots 16-17 */
        ldp     d14, d15, [x1, #SW_ASM_D14]     /* slots 18-19 */
        mov     sp, x9                          /* from here on we are on to's stack */
#if SW_PAC
        AUTH_LR                                 /* x30 checked against to's sp */
        .cfi_negate_ra_state                    /* (x30 is a plain address again) */
#endif
        ret                                     /* resume to; x1 still holds `to` */
        .cfi_endproc
        .size   sw_asm_nofpu_jump, .-sw_asm_nofpu_jump

/*
 * sw__asm_entry: the resume address of a fresh context (both variants), reached by the
 * jump's `ret`, so it needs no BTI landing pad. The jump left the entered context in x1;
 * switch_asm.c set its sp to the 16-byte-aligned top of its stack (AAPCS64 wants sp
 * 16-aligned at all times, and nothing is pushed by a call) and its x29 to 0, so
 * frame-pointer walks end here.
 */
        .globl  sw__asm_entry
        .type   sw__asm_entry, %function
        .p2align 4
sw__asm_entry:
        .cfi_startproc
        .cfi_undefined x30                      /* outermost frame: unwinders stop here */
        mov     x0, x1                          /* sw__run's argument: the entered context */
        bl      sw__run                         /* runs entry(arg), then jumps to ctx->link */
        brk     #0                              /* sw__run never returns */
        .cfi_endproc
        .size   sw__asm_entry, .-sw__asm_entry

/*
 * The GNU property note: tells the linker that this object is fit for BTI (bit 0) and uses
 * PAC return-address signing (bit 1), so that it does not strip either marking from the
 * output. Emitted only when the compiler was asked for the feature.
 */
#if defined(__ARM_FEATURE_BTI_DEFAULT) || defined(__ARM_FEATURE_PAC_DEFAULT)
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define SW_FEATURE_BTI 1
#else
#define SW_FEATURE_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT)
#define SW_FEATURE_PAC 2
#else
#define SW_FEATURE_PAC 0
#endif
        .pushsection .note.gnu.property, "a"
        .p2align 3
        .long   4                               /* n_namesz: "GNU" and its NUL */
        .long   16                              /* n_descsz: one 16-byte property */
        .long   5                               /* n_type: NT_GNU_PROPERTY_TYPE_0 */
        .asciz  "GNU"                           /* n_name */
        .long   0xc0000000                      /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
        .long   4                               /* pr_datasz */
        .long   SW_FEATURE_BTI | SW_FEATURE_PAC /* the feature bits */
        .long   0                               /* padding to 8 bytes */
        .popsection
#endif

        .section .note.GNU-stack, "", %progbits
