// A fixed thread pool summing HashMap merges: the JVM interprets, then
// compiles and patches its code as it runs (tools/bench group "jit").
import java.util.concurrent.*;
import java.util.*;
public class Pool {
    public static void main(String[] a) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(4);
        List<Future<Long>> fs = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            final int k = t;
            fs.add(ex.submit(() -> { long s = 0; HashMap<Integer,Integer> m = new HashMap<>();
                for (int i = 0; i < 200000; i++) { m.merge(i % 1000, i ^ k, Integer::sum); s += m.get(i % 1000); }
                return s; }));
        }
        long tot = 0; for (Future<Long> f : fs) tot += f.get();
        ex.shutdown();
        System.out.println(tot);
    }
}
