/* echo-load's closed loop, the default: a connection's next request leaves as soon as the last
 * one's echo is complete, while the run still wants requests. */
#include "load_core.h"

static void closed_ready(struct ld_core *c, struct slot *s, int64_t now)
{
    if (may_start(c)) ld_core_begin(c, s, now, now);
}

const struct ld_mode_ops ld_mode_closed = {
    .name = "closed",
    .ready = closed_ready,
    .echoed = closed_ready,
};
