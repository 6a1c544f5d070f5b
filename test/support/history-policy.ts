/**
 * A refund policy whose constraints read the history (`last`, `count`, `values`, `held`, and
 * `count` in a `when`), for the tests of "History functions" in docs/policy.md: they read the
 * calls made before the call being judged.
 */
export const historyPolicy = `
policy: history
manual:
  H1: Look up the order before refunding it.
  H2: Never refund more than the previous refund of the order.
  H3: At most two refunds per order.
  H4: Never refund the same amount twice.
  H5: A refund after the first one needs a reason.
  H6: Refund only an order checked for an amount within the request's limit.
  H7: Note every refund after the first one.
tools:
  lookup: {parameters: {order: string}}
  check: {parameters: {order: string, amount: number}}
  refund:
    parameters: {order: string, amount: number, reason: string}
    repairable: [amount]
task:
  request_refund:
    parameters: {order: string, limit: number}
entities:
  order:
    from:
      request_refund: {x: order}
propositions:
  looked_up(order): {tool: lookup, when: "a.order == x"}
  checked(order): {tool: check, when: "a.order == x && a.amount <= task.request_refund.limit"}
  refunded(order): {tool: refund, when: "a.order == x"}
  again(order): {tool: refund, when: "a.order == x && count('refund') >= 1"}
rules:
  - {id: H1, template: precedence, a: "looked_up(order)", b: "refunded(order)"}
  - {id: H7, ltl: "G(!again(order))", mode: warn}
constraints:
  - {id: H2, on: refunded(order), require: "last('refund') == null || a.amount <= last('refund').amount"}
  - {id: H3, on: refunded(order), require: "count('refund') < 2"}
  - {id: H4, on: refunded(order), require: "!(a.amount in values('refund', 'amount'))"}
  - {id: H5, on: again(order), require: "a.reason != ''"}
  - {id: H6, on: refunded(order), require: "held('checked')"}
`;
