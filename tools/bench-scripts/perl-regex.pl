# Perl regular expressions over a text file: matches with captures,
# alternations, a case-insensitive class, and substitutions. Deterministic
# output: counts and a checksum of the rewritten lines.
use strict;
use warnings;

my ($num, $kv, $brk, $caps, $rep, $len, $sum) = (0, 0, 0, 0, 0, 0, 0);
my %first;
while (my $line = <>) {
    chomp $line;
    if ($line =~ /(-?\d+)\.(\d\d) ([a-z]+)/) { $num++; $sum += $1; $first{$3}++ }
    $kv++ if $line =~ /\b(?:key|value)=\w+/;
    $brk++ if $line =~ /\[(?:bracket|paren)\]|\((?:paren|bracket)\)/;
    $caps += () = $line =~ /\b[A-Z]{2,}\b/g;
    (my $t = $line) =~ s/\b(\w)(\w*)\b/\u$1\L$2/g;
    $rep += ($t =~ s/(?i:the|fox|dog)\s+(\w+)/$1!/g) || 0;
    $len += length $t;
}
print "numbers $num sum $sum kv $kv brackets $brk caps $caps rep $rep len $len\n";
for my $w ((sort { $first{$b} <=> $first{$a} || $a cmp $b } keys %first)[0 .. 9]) {
    print "$w $first{$w}\n";
}
