/* interp: a small register-machine bytecode interpreter, run two ways:
 * a switch in a loop (one indirect jump through a table, shared) and
 * computed goto (one indirect jump per handler, "threaded code"). Indirect
 * branches with many targets are the classic hard case for a translator's
 * branch handling. The program counts Collatz steps for 1..N.
 * Short form: N = 3,000. "bench": N = 150,000. "count": N = 30.
 */
#include "common.h"

enum op { LI, MOV, ADD, ADDI, MULI, SHRI, ANDI, BEQI, BLT, JMP, HALT };
struct insn { uint8_t op, a, b, c; int32_t imm; };

/* r1 = n, r2 = x, r3 = scratch, r4 = limit, r5 = total steps */
static const struct insn program[] = {
    /* 0 */ {LI, 1, 0, 0, 1},
    /* 1 */ {LI, 5, 0, 0, 0},
    /* 2 */ {MOV, 2, 1, 0, 0},          /* loop_n: x = n */
    /* 3 */ {BEQI, 2, 0, 0, 1},         /* loop_x: if x == 1 goto next (imm=1, c=target) */
    /* 4 */ {ANDI, 3, 2, 0, 1},
    /* 5 */ {BEQI, 3, 0, 9, 1},         /* odd -> 9 */
    /* 6 */ {SHRI, 2, 2, 0, 1},
    /* 7 */ {ADDI, 5, 5, 0, 1},
    /* 8 */ {JMP, 0, 0, 3, 0},
    /* 9 */ {MULI, 2, 2, 0, 3},
    /* 10 */ {ADDI, 2, 2, 0, 1},
    /* 11 */ {ADDI, 5, 5, 0, 1},
    /* 12 */ {JMP, 0, 0, 3, 0},
    /* 13 */ {ADDI, 1, 1, 0, 1},        /* next: n++ */
    /* 14 */ {BLT, 1, 4, 2, 0},         /* if n < limit goto loop_n */
    /* 15 */ {HALT, 0, 0, 0, 0},
};

static void patch(struct insn *p) {
    /* BEQI at 3 jumps to "next" (13) */
    p[3].c = 13;
}

static uint64_t run_switch(const struct insn *code, int64_t limit, uint64_t *executed) {
    int64_t r[8] = {0};
    r[4] = limit;
    uint64_t n = 0;
    for (int pc = 0;;) {
        const struct insn *i = &code[pc++];
        n++;
        switch (i->op) {
        case LI: r[i->a] = i->imm; break;
        case MOV: r[i->a] = r[i->b]; break;
        case ADD: r[i->a] = r[i->b] + r[i->c]; break;
        case ADDI: r[i->a] = r[i->b] + i->imm; break;
        case MULI: r[i->a] = r[i->b] * i->imm; break;
        case SHRI: r[i->a] = r[i->b] >> i->imm; break;
        case ANDI: r[i->a] = r[i->b] & i->imm; break;
        case BEQI: if (r[i->a] == i->imm) pc = i->c; break;
        case BLT: if (r[i->a] < r[i->b]) pc = i->c; break;
        case JMP: pc = i->c; break;
        case HALT: *executed = n; return (uint64_t)r[5];
        default: abort();
        }
    }
}

static uint64_t run_threaded(const struct insn *code, int64_t limit, uint64_t *executed) {
    static void *const labels[] = {&&do_li, &&do_mov, &&do_add, &&do_addi, &&do_muli, &&do_shri,
                                   &&do_andi, &&do_beqi, &&do_blt, &&do_jmp, &&do_halt};
    int64_t r[8] = {0};
    r[4] = limit;
    uint64_t n = 0;
    const struct insn *i = code;
#define NEXT do { n++; goto *labels[i->op]; } while (0)
    NEXT;
do_li: r[i->a] = i->imm; i++; NEXT;
do_mov: r[i->a] = r[i->b]; i++; NEXT;
do_add: r[i->a] = r[i->b] + r[i->c]; i++; NEXT;
do_addi: r[i->a] = r[i->b] + i->imm; i++; NEXT;
do_muli: r[i->a] = r[i->b] * i->imm; i++; NEXT;
do_shri: r[i->a] = r[i->b] >> i->imm; i++; NEXT;
do_andi: r[i->a] = r[i->b] & i->imm; i++; NEXT;
do_beqi: i = r[i->a] == i->imm ? &code[i->c] : i + 1; NEXT;
do_blt: i = r[i->a] < r[i->b] ? &code[i->c] : i + 1; NEXT;
do_jmp: i = &code[i->c]; NEXT;
do_halt: *executed = n; return (uint64_t)r[5];
#undef NEXT
}

int main(int argc, char **argv) {
    struct insn code[sizeof program / sizeof program[0]];
    memcpy(code, program, sizeof program);
    patch(code);
    int64_t limit = bench_mode(argc, argv) ? 150000 : count_mode(argc, argv) ? 30 : 3000;
    uint64_t e1, e2;
    uint64_t s1 = run_switch(code, limit, &e1);
    uint64_t s2 = run_threaded(code, limit, &e2);
    printf("collatz steps for 1..%lld: switch %llu (%llu insns), threaded %llu (%llu insns)\n",
           (long long)limit - 1, (unsigned long long)s1, (unsigned long long)e1, (unsigned long long)s2,
           (unsigned long long)e2);
    CHECK(s1 == s2 && e1 == e2);
    puts("ok");
    return 0;
}
