package io.github.electionpolicy.testkit.fabric8;

import java.io.PrintStream;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link ServeLeaseApi}'s write log: one line per Lease write, with the wall-clock instant and what changed from
 * the write before it. Thread-safe: the server reports writes from several threads.
 */
final class LeaseWriteLines {

  private final PrintStream out;
  /** Per Lease ({@code namespace/name}), its writes by resource version. */
  private final Map<String, TreeMap<Long, LeaseWrite>> seen = new LinkedHashMap<>();

  LeaseWriteLines(PrintStream out) {
    this.out = out;
  }

  synchronized void print(LeaseWrite write) {
    Instant now = Instant.now();
    TreeMap<Long, LeaseWrite> writes = seen.computeIfAbsent(key(write), key -> new TreeMap<>());
    Map.Entry<Long, LeaseWrite> before = writes.lowerEntry(write.resourceVersion());
    writes.put(write.resourceVersion(), write);
    out.println(line(now, write, before == null ? null : before.getValue()));
  }

  /** The line for {@code write}, stored at {@code at}, after {@code before} ({@code null}: the first). */
  static String line(Instant at, LeaseWrite write, LeaseWrite before) {
    return at + " lease " + key(write) + " rv=" + write.resourceVersion() + " holder=\"" + write.holder()
        + "\" transitions=" + write.leaseTransitions() + " duration=" + write.leaseDuration().toSeconds() + "s "
        + change(before, write);
  }

  static String change(LeaseWrite before, LeaseWrite write) {
    String holder = write.holder();
    if (before == null) {
      return "created";
    }
    String previous = before.holder();
    if (previous.equals(holder)) {
      if (holder.isEmpty()) {
        return "rewritten";
      }
      // fabric8's own LeaderElector releases this way: it keeps its name and shortens the lease.
      return before.leaseDuration().equals(write.leaseDuration()) ? "renewed"
          : "renewed, duration " + before.leaseDuration().toSeconds() + "s -> " + write.leaseDuration().toSeconds() + "s";
    }
    if (previous.isEmpty()) {
      return "acquired";
    }
    return holder.isEmpty() ? "released by \"" + previous + "\"" : "taken over from \"" + previous + "\"";
  }

  /** The last state of each Lease in {@code writes}. */
  synchronized void printSummary(List<LeaseWrite> writes) {
    Map<String, LeaseWrite> last = new LinkedHashMap<>();
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (LeaseWrite write : writes) {
      last.put(key(write), write);
      counts.merge(key(write), 1, Integer::sum);
    }
    if (last.isEmpty()) {
      out.println("leases: none was written");
    }
    last.forEach((key, write) -> out.println("lease " + key + ": holder \"" + write.holder() + "\""
        + (write.holder().isEmpty() ? " (released)" : "") + ", transitions=" + write.leaseTransitions() + ", "
        + counts.get(key) + " writes"));
  }

  private static String key(LeaseWrite write) {
    return write.namespace() + "/" + write.name();
  }
}
