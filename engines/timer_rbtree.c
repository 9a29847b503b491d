/* timer_rbtree.c - timers member "rbtree": NtyCo's sleep and wait red-black trees by deadline. */
#include "timer.h"

#include <stdlib.h>

/*
 * NtyCo (seed 001), after nginx, keeps two red-black trees keyed by deadline: one of sleeping
 * coroutines and one of those waiting on IO with a timeout. Each tree caches its leftmost
 * node, so the earliest deadline is the earlier of two cached minima, and popping is an erase
 * at the left edge. Arm and cancel are O(log n) with at most three rotations; the nodes are
 * the waiters themselves (parent, left and right in the node's links, the colour in pos).
 * Equal deadlines are ordered by arming order, across both trees alike.
 */
enum { RED = 0, BLACK = 1 };

typedef struct rbt {
    tm_node *root, *first;
} rbt;

typedef struct rbtimers {
    rbt tree[2]; /* [TM_WAIT], [TM_SLEEP] */
    size_t n;
    uint64_t seq;
} rbtimers;

#define PARENT(x)   ((x)->link[0])
#define LEFT(x)     ((x)->link[1])
#define RIGHT(x)    ((x)->link[2])
#define IS_BLACK(x) (!(x) || (x)->pos == BLACK)

static int earlier(const tm_node *a, const tm_node *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void rotate_left(rbt *t, tm_node *x)
{
    tm_node *y = RIGHT(x);
    RIGHT(x) = LEFT(y);
    if (LEFT(y)) PARENT(LEFT(y)) = x;
    PARENT(y) = PARENT(x);
    if (!PARENT(x))
        t->root = y;
    else if (x == LEFT(PARENT(x)))
        LEFT(PARENT(x)) = y;
    else
        RIGHT(PARENT(x)) = y;
    LEFT(y) = x;
    PARENT(x) = y;
}

static void rotate_right(rbt *t, tm_node *x)
{
    tm_node *y = LEFT(x);
    LEFT(x) = RIGHT(y);
    if (RIGHT(y)) PARENT(RIGHT(y)) = x;
    PARENT(y) = PARENT(x);
    if (!PARENT(x))
        t->root = y;
    else if (x == RIGHT(PARENT(x)))
        RIGHT(PARENT(x)) = y;
    else
        LEFT(PARENT(x)) = y;
    RIGHT(y) = x;
    PARENT(x) = y;
}

static void insert(rbt *t, tm_node *z)
{
    tm_node *y = NULL, *x = t->root;
    int leftmost = 1;
    while (x) {
        y = x;
        if (earlier(z, x)) {
            x = LEFT(x);
        } else {
            x = RIGHT(x);
            leftmost = 0;
        }
    }
    PARENT(z) = y;
    LEFT(z) = RIGHT(z) = NULL;
    z->pos = RED;
    if (!y)
        t->root = z;
    else if (earlier(z, y))
        LEFT(y) = z;
    else
        RIGHT(y) = z;
    if (leftmost) t->first = z;
    while (PARENT(z) && PARENT(z)->pos == RED) {
        tm_node *p = PARENT(z), *g = PARENT(p); /* g exists: a red node is never the root */
        if (p == LEFT(g)) {
            tm_node *u = RIGHT(g);
            if (!IS_BLACK(u)) {
                p->pos = u->pos = BLACK;
                g->pos = RED;
                z = g;
                continue;
            }
            if (z == RIGHT(p)) {
                z = p;
                rotate_left(t, z);
                p = PARENT(z);
            }
            p->pos = BLACK;
            g->pos = RED;
            rotate_right(t, g);
        } else {
            tm_node *u = LEFT(g);
            if (!IS_BLACK(u)) {
                p->pos = u->pos = BLACK;
                g->pos = RED;
                z = g;
                continue;
            }
            if (z == LEFT(p)) {
                z = p;
                rotate_right(t, z);
                p = PARENT(z);
            }
            p->pos = BLACK;
            g->pos = RED;
            rotate_left(t, g);
        }
    }
    t->root->pos = BLACK;
}

static tm_node *leftmost_of(tm_node *x)
{
    while (LEFT(x))
        x = LEFT(x);
    return x;
}

static tm_node *next(tm_node *x)
{
    if (RIGHT(x)) return leftmost_of(RIGHT(x));
    while (PARENT(x) && x == RIGHT(PARENT(x)))
        x = PARENT(x);
    return PARENT(x);
}

static void transplant(rbt *t, tm_node *u, tm_node *v)
{
    if (!PARENT(u))
        t->root = v;
    else if (u == LEFT(PARENT(u)))
        LEFT(PARENT(u)) = v;
    else
        RIGHT(PARENT(u)) = v;
    if (v) PARENT(v) = PARENT(u);
}

static void erase_fixup(rbt *t, tm_node *x, tm_node *xp)
{
    while (x != t->root && IS_BLACK(x)) {
        if (x == LEFT(xp)) {
            tm_node *w = RIGHT(xp); /* not NULL: xp's right side is one black deeper */
            if (w->pos == RED) {
                w->pos = BLACK;
                xp->pos = RED;
                rotate_left(t, xp);
                w = RIGHT(xp);
            }
            if (IS_BLACK(LEFT(w)) && IS_BLACK(RIGHT(w))) {
                w->pos = RED;
                x = xp;
                xp = PARENT(x);
                continue;
            }
            if (IS_BLACK(RIGHT(w))) {
                LEFT(w)->pos = BLACK;
                w->pos = RED;
                rotate_right(t, w);
                w = RIGHT(xp);
            }
            w->pos = xp->pos;
            xp->pos = BLACK;
            if (RIGHT(w)) RIGHT(w)->pos = BLACK;
            rotate_left(t, xp);
        } else {
            tm_node *w = LEFT(xp);
            if (w->pos == RED) {
                w->pos = BLACK;
                xp->pos = RED;
                rotate_right(t, xp);
                w = LEFT(xp);
            }
            if (IS_BLACK(LEFT(w)) && IS_BLACK(RIGHT(w))) {
                w->pos = RED;
                x = xp;
                xp = PARENT(x);
                continue;
            }
            if (IS_BLACK(LEFT(w))) {
                RIGHT(w)->pos = BLACK;
                w->pos = RED;
                rotate_left(t, w);
                w = LEFT(xp);
            }
            w->pos = xp->pos;
            xp->pos = BLACK;
            if (LEFT(w)) LEFT(w)->pos = BLACK;
            rotate_right(t, xp);
        }
        x = t->root;
        break;
    }
    if (x) x->pos = BLACK;
}

static void erase(rbt *t, tm_node *z)
{
    if (t->first == z) t->first = next(z);
    tm_node *x, *xp, *y = z;
    uint32_t removed = y->pos;
    if (!LEFT(z)) {
        x = RIGHT(z);
        xp = PARENT(z);
        transplant(t, z, x);
    } else if (!RIGHT(z)) {
        x = LEFT(z);
        xp = PARENT(z);
        transplant(t, z, x);
    } else {
        y = leftmost_of(RIGHT(z));
        removed = y->pos;
        x = RIGHT(y);
        if (PARENT(y) == z) {
            xp = y;
        } else {
            xp = PARENT(y);
            transplant(t, y, x);
            RIGHT(y) = RIGHT(z);
            PARENT(RIGHT(y)) = y;
        }
        transplant(t, z, y);
        LEFT(y) = LEFT(z);
        PARENT(LEFT(y)) = y;
        y->pos = z->pos;
    }
    if (removed == BLACK) erase_fixup(t, x, xp);
}

static void *init(int64_t now)
{
    (void)now;
    return calloc(1, sizeof(rbtimers));
}

static void destroy(void *st)
{
    free(st);
}

static int arm(void *st, tm_node *n, int64_t deadline, int64_t now)
{
    (void)now;
    rbtimers *r = st;
    n->deadline = deadline;
    n->seq = r->seq++;
    n->state = TM_ARMED;
    insert(&r->tree[n->kind == TM_SLEEP], n);
    r->n++;
    return 0;
}

static void cancel(void *st, tm_node *n)
{
    rbtimers *r = st;
    if (n->state != TM_ARMED) return;
    erase(&r->tree[n->kind == TM_SLEEP], n);
    n->state = TM_IDLE;
    r->n--;
}

/* The earlier of the two trees' minima (NULL when both are empty). */
static tm_node *first(const rbtimers *r)
{
    tm_node *a = r->tree[0].first, *b = r->tree[1].first;
    if (!a) return b;
    if (!b) return a;
    return earlier(b, a) ? b : a;
}

static int64_t earliest(void *st)
{
    tm_node *f = first(st);
    return f ? f->deadline : TM_NEVER;
}

static tm_node *pop(void *st, int64_t now)
{
    tm_node *f = first(st);
    if (!f || f->deadline > now) return NULL;
    cancel(st, f);
    return f;
}

static size_t count(const void *st)
{
    return ((const rbtimers *)st)->n;
}

const tm_ops tm__rbtree = {
    .name = "rbtree",
    .summary = "sleep and wait red-black trees by deadline (NtyCo, after nginx), exact",
    .props = {.exact = true,
              .granularity_ns = 0,
              .max_rel_error = 0,
              .fifo = true,
              .arm = "O(log n)",
              .cancel = "O(log n)",
              .expire = "O(log n)"},
    .init = init,
    .free = destroy,
    .arm = arm,
    .cancel = cancel,
    .earliest = earliest,
    .pop = pop,
    .count = count,
};
