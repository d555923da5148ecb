package io.github.electionpolicy.springboot.example;

import io.github.electionpolicy.fabric8.LeaderService;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot service whose order reconciler runs on one replica at a time: the whole integration is the
 * election-spring-boot dependency, {@code election.lease-name} in its configuration (orders-service.yml) and
 * the {@link LeaderService} bean below. ExampleApplicationTest runs this {@code main} in a JVM of its own
 * against the embedded Lease API, sees it lead and reconcile, and stops it with SIGTERM as Kubernetes would.
 */
@SpringBootApplication
public class OrdersService {

  public static void main(String[] args) {
    SpringApplication.run(OrdersService.class, args);
  }

  @Bean
  LeaderService ordersReconciler() {
    return new OrdersReconciler();   // started only while this replica leads, stopped on loss and shutdown
  }
}
