"""The glossary of REPORT.html: the report's terms explained for a reader new to them (a
teacher, a student), one or two sentences each, alphabetical. A term the report starts to use
gets its line here; tests/test_page.py checks each entry is well formed."""

TERMS = [
    ("adaptive / eager / wait (read policies)",
     "When a fiber reads from a socket it can try the read at once (eager), first wait until "
     "the event engine says data is there (wait), or guess from the last read whether the "
     "socket is now empty (adaptive). They trade wasted system calls against wasted waits."),
    ("backend (switch backend)",
     "One way of implementing the context switch between fibers: hand-written assembly (asm, "
     "asm-nofpu), Boost's fcontext, setjmp/longjmp or the C library's ucontext. Every backend "
     "saves the registers of one fiber and loads those of the next."),
    ("C10K",
     "The classic problem of serving ten thousand connections at once on one machine. It asks "
     "how much memory and CPU each idle or busy connection costs a server."),
    ("callgrind",
     "A Valgrind tool that runs a program on a simulated CPU and counts the instructions it "
     "executes; unlike a timer, the count is the same on every run."),
    ("CFS",
     "The Completely Fair Scheduler of Linux, which decides which kernel thread runs next; "
     "claim C15 asks whether its cost grows with the logarithm of the number of threads."),
    ("churn",
     "A load in which each client connects, sends one request, reads the answer and closes, so "
     "the server spends much of its time accepting and tearing down connections."),
    ("confidence interval (95%)",
     "The range [low, high] beside a figure: the values its repeated samples make likely, from "
     "a bootstrap (the samples drawn again at random many times). A verdict compares this "
     "range, not the single middle value, with the rule's thresholds."),
    ("copy stack",
     "Instead of giving every fiber a stack of its own, fibers share one stack and the live "
     "part of a suspended fiber's stack is copied out and back in at each switch: less memory, "
     "more work per switch."),
    ("edge / level triggering",
     "Two ways for epoll to report a socket: level-triggered reports it as long as data is "
     "waiting, edge-triggered only when new data arrives. Edge triggering needs fewer calls "
     "but the program must read until the socket is empty."),
    ("epoll, epoll_ctl",
     "Linux's interface for waiting on many sockets at once: epoll_wait returns the ready ones, "
     "epoll_ctl adds, changes or removes a socket from the watched set. Each epoll_ctl is a "
     "system call, so calling it on every request costs time."),
    ("fiber",
     "A thread of execution managed by the program rather than the kernel: switching between "
     "fibers is a function call that swaps registers and stacks, with no system call."),
    ("floor row (floor, floor-fp)",
     "A benchmark row that does the least any switch must do (save the callee-saved registers "
     "and jump; floor-fp also the floating-point control words): the cost no backend can beat."),
    ("fork, prefork, thread, threadpool",
     "Server models: a new process (fork) or kernel thread (thread) per connection, a fixed set "
     "of processes started in advance (prefork), or a fixed set of threads serving connections "
     "from a queue (threadpool)."),
    ("guard page",
     "An inaccessible page placed below a stack, so a stack overflow crashes at once with a "
     "clear error instead of silently overwriting other memory."),
    ("hooked call",
     "A blocking call such as read that the fiber library intercepts, so it suspends only the "
     "calling fiber and lets the others run, instead of blocking the whole thread."),
    ("hop (star and ring)",
     "Passing the CPU from one fiber to the next in a run queue. In a star every hop goes "
     "through the scheduler (two switches); in a ring a fiber hands the CPU directly to the "
     "next (one switch)."),
    ("io_uring (uring, uring-poll)",
     "A newer Linux interface where the program queues requests in memory shared with the "
     "kernel. uring asks the kernel to do the reads and writes (completion); uring-poll only "
     "asks it which sockets are ready (readiness), like epoll."),
    ("KernelStack, SUnreclaim, PageTables",
     "Lines of /proc/meminfo: memory the kernel uses for thread stacks, for its own data "
     "structures such as socket buffers, and for the page tables of processes. The report "
     "counts their growth per connection as kernel memory."),
    ("libevent",
     "A widely used C library that wraps epoll (and other mechanisms) behind callbacks; it is "
     "one of the yardsticks the fiber server is compared with."),
    ("naive, merged, oneshot (engines)",
     "Ways of using epoll: naive removes and re-adds a socket around every wake-up (two "
     "epoll_ctl per request), merged skips the pair when nothing changed, oneshot asks epoll "
     "to disarm the socket after each report."),
    ("p99",
     "The 99th percentile of latency: 99 out of 100 requests were answered at least this fast."),
    ("ping-pong",
     "A load in which each connection sends one request and waits for its answer before "
     "sending the next, so exactly one request per connection is in flight."),
    ("PSS, RSS (VmRSS)",
     "Resident set size (RSS, VmRSS in /proc) is the memory of a process that is in RAM; "
     "proportional set size (PSS) divides each page shared by several processes among them, "
     "so forked servers are not counted many times for the same pages."),
    ("qemu-user",
     "An emulator that runs a program built for another CPU (here aarch64) on this one; its "
     "times are those of the emulation, not of real aarch64 hardware."),
    ("ramp-up",
     "The time the load generator takes to open every connection and complete one echo on "
     "each, before measuring starts."),
    ("readiness and completion",
     "Two styles of asynchronous I/O: with readiness (epoll) the kernel says a socket can be "
     "read and the program then reads; with completion (io_uring) the program asks for the "
     "read and the kernel says when it is done."),
    ("RLIMIT_NOFILE, vm.max_map_count, FD_SETSIZE",
     "Limits of the machine: how many files a process may open, how many memory mappings it "
     "may have, and the largest descriptor select() can watch (1024)."),
    ("Spectre v2 mitigations",
     "Protections against a class of CPU attacks; they make every entry into the kernel more "
     "expensive, which is why a trivial system call takes hundreds of cycles here."),
    ("system call (syscall)",
     "A request from a program to the kernel, such as read or getppid; it crosses from user "
     "mode into kernel mode and back, which costs far more than a function call."),
    ("verdict",
     "What the report concludes about a claim from its rule: holds, holds partly, does not "
     "hold, inconclusive when a deciding figure's interval straddles a threshold (the data "
     "allow more than one verdict), or not run when this run has no data for it."),
]
