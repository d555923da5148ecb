package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the LeaderService beans of the tests' contexts did: which run now, and every start and stop in order,
 * named "replica:service".
 */
final class ServiceLog {

  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final List<LeadershipTerm> terms = new CopyOnWriteArrayList<>();

  /** A service that records its starts and stops under {@code name}. */
  LeaderService service(String name) {
    return new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {
        terms.add(term);
        running.add(name);
        events.add("start " + name);
      }

      @Override
      public void stop() {
        running.remove(name);
        events.add("stop " + name);
      }

      @Override
      public String toString() {
        return "recorded service " + name;
      }
    };
  }

  Set<String> running() {
    return Set.copyOf(running);
  }

  List<String> events() {
    return List.copyOf(events);
  }

  List<LeadershipTerm> terms() {
    return List.copyOf(terms);
  }
}
