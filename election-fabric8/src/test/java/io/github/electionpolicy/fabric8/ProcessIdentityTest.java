package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.Environment;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The identity a contending runner resolves at start, in its order of precedence. */
class ProcessIdentityTest {

  private static final Supplier<Optional<String>> NO_HOST_NAME = Optional::empty;
  private static final Supplier<Optional<String>> HOST_NAME = () -> Optional.of("laptop.local");

  private static ProcessIdentity.Resolved resolve(Map<String, String> variables, Supplier<Optional<String>> host) {
    return ProcessIdentity.resolve(Optional.empty(), Environment.of(variables), host);
  }

  @Test
  void anExplicitIdentityIsUsedAsGivenAndNothingElseIsRead() {
    AtomicInteger lookups = new AtomicInteger();
    Environment unread = name -> {
      throw new AssertionError("read " + name);
    };

    ProcessIdentity.Resolved resolved = ProcessIdentity.resolve(Optional.of("replica-a"), unread, () -> {
      lookups.incrementAndGet();
      return Optional.empty();
    });

    assertThat(resolved).isEqualTo(new ProcessIdentity.Resolved("replica-a", ProcessIdentity.Source.EXPLICIT));
    assertThat(lookups).hasValue(0);
  }

  @Test
  void thePodNameComesFirstWithAShortRandomSuffix() {
    ProcessIdentity.Resolved first = resolve(Map.of("POD_NAME", "orders-7f9c-x2k4", "HOSTNAME", "h"), HOST_NAME);
    ProcessIdentity.Resolved second = resolve(Map.of("POD_NAME", "orders-7f9c-x2k4", "HOSTNAME", "h"), HOST_NAME);

    assertThat(first.source()).isEqualTo(ProcessIdentity.Source.POD_NAME);
    assertThat(first.identity()).matches("orders-7f9c-x2k4-[a-z0-9]{5}");
    assertThat(second.identity()).matches("orders-7f9c-x2k4-[a-z0-9]{5}").isNotEqualTo(first.identity());
  }

  @Test
  void aBlankPodNameFallsBackToHostname() {
    ProcessIdentity.Resolved resolved = resolve(Map.of("HOSTNAME", " worker-3 ", "POD_NAME", " "), HOST_NAME);

    assertThat(resolved.source()).isEqualTo(ProcessIdentity.Source.HOSTNAME);
    assertThat(resolved.identity()).matches("worker-3-[a-z0-9]{5}");
  }

  @Test
  void withNeitherVariableTheJvmHostNameIsUsed() {
    ProcessIdentity.Resolved resolved = resolve(Map.of("POD_NAME", "", "HOSTNAME", "\t"), HOST_NAME);

    assertThat(resolved.source()).isEqualTo(ProcessIdentity.Source.HOST_NAME);
    assertThat(resolved.identity()).matches("laptop\\.local-[a-z0-9]{5}");
  }

  @Test
  void withNoHostNameEitherTheIdentityIsRandom() {
    ProcessIdentity.Resolved first = resolve(Map.of(), NO_HOST_NAME);
    ProcessIdentity.Resolved second = resolve(Map.of(), () -> Optional.of("  "));

    assertThat(first.source()).isEqualTo(ProcessIdentity.Source.RANDOM);
    assertThat(first.identity()).matches("replica-[a-z0-9]{10}");
    assertThat(second.identity()).matches("replica-[a-z0-9]{10}").isNotEqualTo(first.identity());
  }

  @Test
  void theJvmHostNameLookupReturnsWithinItsBound() {
    long start = System.nanoTime();

    Optional<String> name = ProcessIdentity.jvmHostName();

    assertThat(System.nanoTime() - start).isLessThan(ProcessIdentity.HOST_NAME_WAIT.plusSeconds(1).toNanos());
    name.ifPresent(n -> assertThat(n).isNotBlank());
  }

  @Test
  void theSourceSaysWhereTheIdentityCameFromForTheLog() {
    assertThat(ProcessIdentity.Source.POD_NAME).hasToString("from POD_NAME plus a random suffix");
    assertThat(ProcessIdentity.Source.RANDOM.toString()).contains("set POD_NAME from the downward API");
  }
}
