/* hot_text.h - where the code of one echo request's path through the fiber runtime is placed. */
#ifndef SWITCHYARD_HOT_TEXT_H
#define SWITCHYARD_HOT_TEXT_H

/*
 * On a guest with page-table isolation and no PCID (the PVM-based Firecracker guests this
 * project is measured on), every system call switches page tables and so empties the TLB:
 * after each one, every 4 KiB page of code a request runs costs a page walk again. Measured
 * on the 2-core AMD EPYC VM, a getppid followed by calls to functions on k distinct pages
 * costs 5-9 ns more per page than the same calls within one page; without the system call
 * the difference is 0.5 ns (results/notes/harness.md).
 *
 * A fiber server's request runs code from four source files of the runtime and one of the
 * server (read, write, park, the scheduler's loop, the engine's wait and poll, the wake, the
 * switch), which in link order would lie on seven pages; a callback server's loop is two
 * functions of one file, on one page. The functions a request runs are placed in one section,
 * which GNU ld's default script lays out together ahead of the rest of .text, so they occupy
 * two or three consecutive pages. harness/gate/iopath.py --code-pages counts the pages a
 * request runs, and test harness/iopath/hot-text checks that every function of echo-server
 * it runs for a request of the default fiber server is in this section. The x86_64 switch
 * (switch/switch_x86_64_sysv_elf_gas.S) names the section itself.
 */
#define HOT_TEXT __attribute__((section(".text.hot.request_path")))

#endif
