/* switch: large switch statements, which gcc turns into jump tables
 * (absolute entries in c-switch, table-relative offsets in cpie-switch),
 * plus a dense byte-keyed switch, a sparse one (a binary decision tree) and
 * a switch inside a loop over every key and then random keys.
 */
#include "common.h"

/* 188 cases over 0..600 with gaps and holes: a jump table with defaults */
__attribute__((noinline)) static uint64_t big(unsigned key, uint64_t x) {
    switch (key) {
    case 0: return x % 971 * 154;
    case 4: return x * 75 + 840;
    case 8: return (x ^ 375) - 596;
    case 9: return x / 39 + 88;
    case 13: return ~x + 72;
    case 18: return ~x + 61;
    case 22: return (x ^ 971) - 228;
    case 26: return x * 591 + 599;
    case 27: return x * 1000 + 226;
    case 31: return (x << 3) | 429;
    case 35: return (x ^ 585) - 315;
    case 36: return (x << 10) | 595;
    case 40: return x / 382 + 99;
    case 44: return (x ^ 578) - 61;
    case 45: return x / 509 + 696;
    case 49: return ~x + 796;
    case 53: return (x + 371) * (x - 306);
    case 54: return (x << 4) | 798;
    case 58: return (x ^ 589) - 307;
    case 62: return (x + 897) * (x - 351);
    case 63: return (x + 295) * (x - 623);
    case 71: return (x ^ 525) - 428;
    case 72: return x % 156 * 955;
    case 76: return ~x + 41;
    case 80: return (x ^ 783) - 571;
    case 81: return x % 349 * 711;
    case 85: return (x + 594) * (x - 816);
    case 89: return (x ^ 861) - 95;
    case 90: return (x + 714) * (x - 680);
    case 94: return x * 749 + 718;
    case 98: return (x + 292) * (x - 733);
    case 99: return x % 24 * 963;
    case 103: return x % 173 * 625;
    case 107: return (x + 61) * (x - 223);
    case 108: return (x >> 4) ^ 133;
    case 112: return ~x + 401;
    case 116: return (x ^ 171) - 459;
    case 121: return (x >> 7) ^ 905;
    case 125: return (x >> 6) ^ 724;
    case 126: return ~x + 981;
    case 130: return (x ^ 181) - 154;
    case 134: return x / 13 + 496;
    case 135: return (x << 1) | 288;
    case 139: return (x << 6) | 547;
    case 143: return x % 976 * 128;
    case 144: return x * 468 + 921;
    case 148: return ~x + 408;
    case 152: return (x ^ 494) - 649;
    case 153: return x * 196 + 68;
    case 157: return (x + 167) * (x - 112);
    case 161: return x * 105 + 0;
    case 162: return (x << 6) | 103;
    case 166: return x * 73 + 895;
    case 171: return ~x + 153;
    case 175: return x % 617 * 372;
    case 179: return (x ^ 119) - 869;
    case 180: return (x + 492) * (x - 495);
    case 184: return (x ^ 148) - 104;
    case 188: return x % 759 * 271;
    case 189: return (x << 4) | 23;
    case 193: return x % 151 * 706;
    case 197: return x * 777 + 540;
    case 198: return (x ^ 713) - 865;
    case 202: return x % 931 * 171;
    case 206: return x / 546 + 554;
    case 207: return x % 652 * 228;
    case 211: return x / 826 + 245;
    case 215: return x / 205 + 530;
    case 216: return x % 749 * 29;
    case 224: return (x >> 4) ^ 484;
    case 225: return x % 458 * 827;
    case 229: return x % 978 * 997;
    case 233: return (x ^ 226) - 104;
    case 234: return (x + 202) * (x - 345);
    case 238: return (x + 640) * (x - 921);
    case 242: return x * 491 + 931;
    case 243: return x % 819 * 658;
    case 247: return (x ^ 932) - 397;
    case 251: return x / 490 + 910;
    case 252: return ~x + 809;
    case 256: return (x ^ 821) - 968;
    case 260: return ~x + 475;
    case 261: return (x ^ 743) - 162;
    case 265: return (x << 10) | 154;
    case 269: return (x + 826) * (x - 671);
    case 274: return (x + 674) * (x - 959);
    case 278: return (x << 3) | 561;
    case 279: return x * 15 + 818;
    case 283: return (x ^ 540) - 767;
    case 287: return ~x + 893;
    case 288: return x * 258 + 217;
    case 292: return x / 783 + 600;
    case 296: return (x >> 3) ^ 558;
    case 297: return x * 932 + 757;
    case 301: return (x + 679) * (x - 597);
    case 305: return ~x + 847;
    case 306: return (x << 9) | 155;
    case 310: return x * 894 + 450;
    case 314: return (x << 13) | 4;
    case 315: return (x << 8) | 144;
    case 319: return (x ^ 570) - 63;
    case 324: return (x + 804) * (x - 795);
    case 328: return x * 255 + 195;
    case 332: return x * 791 + 100;
    case 333: return (x + 576) * (x - 28);
    case 337: return (x ^ 454) - 333;
    case 341: return x / 710 + 283;
    case 342: return (x + 520) * (x - 964);
    case 346: return (x >> 4) ^ 945;
    case 350: return (x + 141) * (x - 426);
    case 351: return ~x + 453;
    case 355: return x / 439 + 74;
    case 359: return (x >> 13) ^ 803;
    case 360: return (x << 11) | 733;
    case 364: return x % 147 * 259;
    case 368: return (x + 225) * (x - 764);
    case 369: return ~x + 907;
    case 377: return x / 166 + 723;
    case 378: return ~x + 348;
    case 382: return x % 327 * 94;
    case 386: return x % 20 * 346;
    case 387: return (x + 452) * (x - 720);
    case 391: return ~x + 340;
    case 395: return (x >> 2) ^ 525;
    case 396: return (x ^ 941) - 807;
    case 400: return (x ^ 87) - 271;
    case 404: return x * 928 + 797;
    case 405: return (x >> 7) ^ 774;
    case 409: return (x >> 9) ^ 416;
    case 413: return (x + 718) * (x - 334);
    case 414: return (x >> 12) ^ 59;
    case 418: return (x << 2) | 916;
    case 422: return (x >> 11) ^ 961;
    case 427: return (x ^ 821) - 266;
    case 431: return x / 69 + 270;
    case 432: return (x + 12) * (x - 347);
    case 436: return ~x + 949;
    case 440: return (x << 12) | 539;
    case 441: return x / 961 + 112;
    case 445: return (x >> 4) ^ 52;
    case 449: return (x >> 9) ^ 644;
    case 450: return x / 297 + 456;
    case 454: return (x << 13) | 355;
    case 458: return x * 257 + 37;
    case 459: return x * 751 + 517;
    case 463: return x / 527 + 486;
    case 467: return (x + 109) * (x - 674);
    case 468: return ~x + 673;
    case 472: return ~x + 994;
    case 477: return x / 236 + 350;
    case 481: return (x << 1) | 355;
    case 485: return (x << 11) | 72;
    case 486: return (x >> 1) ^ 442;
    case 490: return (x ^ 682) - 861;
    case 494: return (x >> 12) ^ 614;
    case 495: return (x >> 3) ^ 47;
    case 499: return (x << 1) | 456;
    case 503: return (x >> 6) ^ 373;
    case 504: return x % 251 * 35;
    case 508: return x / 366 + 187;
    case 512: return x % 391 * 85;
    case 513: return (x >> 4) ^ 515;
    case 517: return x / 517 + 794;
    case 521: return (x ^ 271) - 836;
    case 522: return (x << 1) | 600;
    case 530: return ~x + 24;
    case 531: return x / 87 + 599;
    case 535: return (x << 12) | 914;
    case 539: return ~x + 783;
    case 540: return (x + 154) * (x - 290);
    case 544: return (x << 12) | 844;
    case 548: return ~x + 752;
    case 549: return (x << 13) | 536;
    case 553: return x * 847 + 702;
    case 557: return x / 88 + 31;
    case 558: return (x << 2) | 369;
    case 562: return ~x + 856;
    case 566: return x * 643 + 19;
    case 567: return x / 502 + 270;
    case 571: return (x + 817) * (x - 71);
    case 575: return (x ^ 676) - 538;
    case 580: return (x + 259) * (x - 828);
    case 584: return (x >> 13) ^ 241;
    case 585: return x / 237 + 757;
    case 589: return (x + 506) * (x - 865);
    case 593: return (x ^ 491) - 932;
    case 594: return (x >> 10) ^ 786;
    case 598: return x / 80 + 614;
    default: return x + key;
    }
}

/* dense small switch on a character class */
__attribute__((noinline)) static int classify(int c) {
    switch (c) {
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return 1;
    case 'a': case 'e': case 'i': case 'o': case 'u': return 2;
    case ' ': case '\t': case '\n': return 3;
    case '(': case ')': case '[': case ']': case '{': case '}': return 4;
    case '+': case '-': case '*': case '/': return 5;
    default: return c >= 'a' && c <= 'z' ? 6 : 0;
    }
}

/* sparse keys: compiled to a comparison tree */
__attribute__((noinline)) static int sparse(long k) {
    switch (k) {
    case -1000000: return 1;
    case -7: return 2;
    case 0: return 3;
    case 13: return 4;
    case 4096: return 5;
    case 65537: return 6;
    case 1L << 40: return 7;
    case 0x7fffffffffffffffL: return 8;
    default: return 0;
    }
}

int main(int argc, char **argv) {
    uint64_t h = FNV_INIT;
    for (unsigned key = 0; key < 700; key++) {
        uint64_t v = big(key, 0x123456789abcdefULL + key);
        h = fnv1a(&v, sizeof v, h);
        if (key % 100 == 3)
            printf("big(%u) = %llu\n", key, (unsigned long long)v);
    }
    printf("all keys digest %016llx\n", (unsigned long long)h);
    rng_t r = {99};
    long rounds = bench_mode(argc, argv) ? 60000000 : count_mode(argc, argv) ? 500 : 200000;
    uint64_t acc = 0;
    for (long i = 0; i < rounds; i++) {
        uint64_t x = rng_next(&r);
        acc += big((unsigned)(x % 650), x >> 3);
    }
    printf("random keys: acc %016llx\n", (unsigned long long)acc);
    const char *text = "int main(void) { return a[3] + (b * 42) - c / 7; }\n\tvowels aeiou 0123456789";
    int counts[7] = {0};
    for (const char *p = text; *p; p++)
        counts[classify(*p)]++;
    printf("classes: other %d digit %d vowel %d space %d bracket %d op %d letter %d\n", counts[0],
           counts[1], counts[2], counts[3], counts[4], counts[5], counts[6]);
    long keys[] = {-1000000, -7, 0, 13, 4096, 65537, 1L << 40, 0x7fffffffffffffffL, 5, -8};
    int s = 0;
    for (unsigned i = 0; i < sizeof keys / sizeof keys[0]; i++)
        s = s * 10 + sparse(keys[i]);
    printf("sparse switch: %d\n", s);
    CHECK(s == 1234567800);
    puts("ok");
    return 0;
}
