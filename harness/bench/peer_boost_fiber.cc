// peer_boost_fiber.cc - the peer/boost-fiber rows: Boost.Fiber in the loops of peer_loops.h.
// C++ because Boost.Fiber is a C++ library; everything else of the peer rows is C.
#include "peer_loops.h"

#include <boost/fiber/all.hpp>

#include <cerrno>
#include <exception>
#include <memory>
#include <new>
#include <vector>

namespace
{

namespace bf = boost::fibers;
// Guarded stacks of PEER_STACK usable bytes, one mapping each plus a guard page, as our
// runtime's guarded stacks are.
using Stack = boost::context::protected_fixedsize_stack;

struct Shared {
    peer_run *r;
    bf::mutex m;
    bf::condition_variable c;
    int turn = 0;  // cond/contended: whose turn it is (0: the driver, 1: the partner)
    long done = 0; // mutex/contended: pairs of either fiber in this batch
    bool stop = false;
    bool failed = false; // a fiber could not be created: those that were end at once
};

void ring_driver(Shared &s)
{
    peer_run *r = s.r;
    if (s.failed) return;
    boost::this_fiber::yield(); // warm-up round: every fiber runs once and touches its stack
    const long rounds = r->batch / r->fibers;
    while (r->more(r->more_arg)) {
        for (long i = 0; i < rounds; i++)
            boost::this_fiber::yield();
        r->units += static_cast<uint64_t>(rounds * r->fibers);
    }
    s.stop = true;
}

void ring_peer(Shared &s)
{
    while (!s.stop)
        boost::this_fiber::yield();
}

// mutex/contended: both fibers run this; whichever completes a batch asks more().
void contend(Shared &s, bool second)
{
    peer_run *r = s.r;
    while (!s.stop) {
        s.m.lock();
        boost::this_fiber::yield();
        s.m.unlock();
        if (second) r->partner++;
        if (++s.done == r->batch) {
            s.done = 0;
            r->units += static_cast<uint64_t>(r->batch);
            if (!r->more(r->more_arg)) s.stop = true;
        }
    }
}

void lock_driver(Shared &s)
{
    peer_run *r = s.r;
    if (s.failed) return;
    if (r->loop == PEER_MUTEX_CONTENDED) {
        if (r->more(r->more_arg))
            contend(s, false);
        else
            s.stop = true;
        return;
    }
    boost::this_fiber::yield(); // the partner, if any, runs once first
    while (r->more(r->more_arg)) {
        switch (r->loop) {
        case PEER_MUTEX_UNCONTENDED:
            for (long i = 0; i < r->batch; i++) {
                s.m.lock();
                s.m.unlock();
            }
            break;
        case PEER_COND_UNCONTENDED:
            for (long i = 0; i < r->batch; i++)
                s.c.notify_one();
            break;
        case PEER_COND_CONTENDED: {
            std::unique_lock<bf::mutex> lk(s.m);
            for (long i = 0; i < r->batch; i += 2) { // two hand-offs per turn of ours
                while (s.turn != 0)
                    s.c.wait(lk);
                s.turn = 1;
                s.c.notify_one();
            }
            break;
        }
        case PEER_RING: /* run elsewhere */
        case PEER_MUTEX_CONTENDED:
            std::terminate();
        }
        r->units += static_cast<uint64_t>(r->batch);
    }
    // One thread, no preemption: the partner reads stop when it next runs. Taking the mutex
    // here would wait behind a partner that never lets go of it (Boost's mutex lets the
    // unlocker take it straight back, before the woken waiter runs).
    s.stop = true;
    s.c.notify_one();
}

void lock_partner(Shared &s)
{
    if (s.r->loop == PEER_MUTEX_CONTENDED) {
        contend(s, true);
        return;
    }
    std::unique_lock<bf::mutex> lk(s.m);
    for (;;) {
        while (s.turn != 1 && !s.stop)
            s.c.wait(lk);
        if (s.stop) return;
        s.turn = 0;
        s.c.notify_one();
    }
}

// The fibers run on the calling thread's scheduler (round_robin, Boost.Fiber's default); the
// calling thread's main context joins them and is not part of the ring while it waits.
int run(peer_run *r)
{
    Shared s;
    s.r = r;
    std::vector<bf::fiber> fibers;
    bool ring = r->loop == PEER_RING;
    long n = ring ? r->fibers
                  : (r->loop == PEER_MUTEX_CONTENDED || r->loop == PEER_COND_CONTENDED ? 2 : 1);
    int err = 0;
    try {
        fibers.reserve(static_cast<size_t>(n));
        fibers.emplace_back(std::allocator_arg, Stack(PEER_STACK),
                            [&s, ring] { ring ? ring_driver(s) : lock_driver(s); });
        for (long i = 1; i < n; i++)
            fibers.emplace_back(std::allocator_arg, Stack(PEER_STACK),
                                [&s, ring] { ring ? ring_peer(s) : lock_partner(s); });
    } catch (const std::bad_alloc &) {
        err = ENOMEM;
    } catch (const std::exception &) {
        err = EAGAIN; // a stack mapping failed (vm.max_map_count?)
    }
    if (err) s.failed = s.stop = true;
    for (auto &f : fibers) // none has run yet: joining starts them
        f.join();
    r->note = "guarded stacks (protected_fixedsize_stack)";
    errno = err;
    return err ? -1 : 0;
}

} // namespace

extern "C" int peer_boost_fiber_run(peer_run *r)
{
    r->units = r->partner = 0;
    return run(r);
}
