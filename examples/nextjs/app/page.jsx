// A Server Component: rendered on the server, it imports no idemkey itself.
import PayForm from "./pay-form";

export default function Page() {
  return (
    <main>
      <p>Cart 42: 42.00 EUR</p>
      <PayForm cartId="42" />
    </main>
  );
}
