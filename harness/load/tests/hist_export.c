/* Latency samples (ns, one a line on stdin) into echo-load's histogram, printed as its JSON export
 * and its percentiles: the reference the agents test holds drive/merge.py's merge against. */
#include "histogram.h"

#include <inttypes.h>
#include <stdio.h>

int main(void)
{
    static struct ld_hist h;
    ld_hist_init(&h);
    uint64_t v;
    while (scanf("%" SCNu64, &v) == 1)
        ld_hist_record(&h, v);
    if (!feof(stdin)) {
        fprintf(stderr, "hist-export: stdin must hold whole numbers of ns, one a line\n");
        return 2;
    }
    printf("{\"histogram\":");
    ld_hist_json(stdout, &h);
    printf(",\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64 "}\n",
           ld_hist_percentile(&h, 50), ld_hist_percentile(&h, 99), ld_hist_percentile(&h, 99.9));
    return fflush(stdout) == 0 ? 0 : 1;
}
