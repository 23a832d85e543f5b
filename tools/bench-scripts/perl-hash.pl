# Perl hashes: building, updating and walking large hashes of strings and
# hashes of arrays. No input; deterministic output (keys are sorted).
use strict;
use warnings;

my @syl = qw(ka lo mi ne ru sa to vi ze qu an er in on us bra);
my $x = 1;
sub rnd { $x = ($x * 1103515245 + 12345) % 2147483648; return $x >> 8 }

my (%count, %groups, %pair);
for my $i (1 .. 250000) {
    my $w = join '', map { $syl[rnd() % @syl] } 1 .. (1 + rnd() % 3);
    $count{$w}++;
    push @{ $groups{ substr($w, 0, 2) } }, $i if $i % 3 == 0;
    $pair{"$w:" . ($i % 97)} += $i % 13;
}
my $deleted = 0;
for my $k (keys %pair) {
    if ($pair{$k} % 5 == 0) { delete $pair{$k}; $deleted++ }
}
my $total = 0;
$total += $_ for values %pair;
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 7];
print join(' ', map { "$_=$count{$_}" } @top), "\n";
print "distinct ", scalar(keys %count), " groups ", scalar(keys %groups),
      " pairs ", scalar(keys %pair), " deleted $deleted total $total\n";
print join(',', map { "$_:" . scalar(@{ $groups{$_} }) } sort keys %groups), "\n";
