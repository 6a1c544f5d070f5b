/**
 * Realistic repair requests for the solver benchmark and the stress test: the constraints of
 * travel, refund, payment and patient-intake policies (equality, membership, enums, arithmetic
 * bounds), and a string-heavy set (contains, prefix, suffix). Deterministic for a seed.
 */
import { parseExpression, type Value } from "../../src/expression/index.js";
import type { RepairRequest } from "../../src/index.js";

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

const history = (last: Record<string, Value>) => ({
  last: (tool: string) => last[tool] ?? null,
  outcomes: (tool: string) => (tool in last ? [last[tool] as Value] : []),
  held: () => false,
  count: () => 0,
  values: () => [],
});

const cities = ["Paris", "Lyon", "Nice", "Lille", "Nantes"];
const travelConstraint = parseExpression("a.travel_class == 'economy' || task.request_travel.urgent == true");
const routeConstraint = parseExpression("a.origin == x && a.destination in [y, 'Nice']");
const refundConstraint = parseExpression(
  "a.amount <= last('get_order').paid_amount && a.amount > 0 && a.reason in ['damaged', 'wrong item', 'late']",
);
const transferConstraint = parseExpression(
  "a.amount <= 1000 && a.currency in ['EUR', 'USD'] && a.fee >= a.amount * 0.01 && a.from_account != a.to_account",
);
const intakeConstraint = parseExpression(
  "a.insurance_status == last('validateInsurance').status && a.copay >= 0 && a.copay <= 50 && len(a.patient_id) == 8",
);
const stayConstraint = parseExpression(
  "a.nights >= 1 && a.nights <= task.request_stay.max_nights && a.guests - 1 < 4",
);

/** One realistic request; about two in three violate a constraint. */
export function realisticRequest(next: () => number): RepairRequest {
  const kind = Math.floor(next() * 6);
  const violate = next() < 0.67;
  switch (kind) {
    case 0: {
      const origin = pick(next, cities);
      return {
        tool: {
          name: "book_flight",
          parameters: [
            { name: "origin", type: "string" },
            { name: "destination", type: "string" },
            { name: "travel_class", type: { enum: ["economy", "premium", "business", "first"] } },
          ],
          required: ["origin", "destination", "travel_class"],
        },
        arguments: {
          origin,
          destination: "Lyon",
          travel_class: violate ? pick(next, ["business", "first"]) : "economy",
        },
        constraints: [travelConstraint],
        scope: { task: { request_travel: { urgent: false } } },
        repairable: ["travel_class"],
      };
    }
    case 1:
      return {
        tool: {
          name: "book_flight",
          parameters: [
            { name: "origin", type: "string" },
            { name: "destination", type: "string" },
          ],
          required: ["origin", "destination"],
        },
        arguments: { origin: violate ? pick(next, cities) : "Paris", destination: violate ? "Rome" : "Lyon" },
        constraints: [routeConstraint],
        scope: { variables: { x: "Paris", y: "Lyon" } },
        repairable: ["origin", "destination"],
        candidates: { origin: ["Paris"], destination: ["Lyon"] },
      };
    case 2: {
      const paid = 20 + Math.floor(next() * 200) + 0.5;
      return {
        tool: {
          name: "refund",
          parameters: [
            { name: "order_id", type: "string" },
            { name: "amount", type: "number" },
            { name: "reason", type: { enum: ["damaged", "wrong item", "late", "changed mind"] } },
          ],
          required: ["order_id", "amount", "reason"],
        },
        arguments: {
          order_id: `o${Math.floor(next() * 1e6)}`,
          amount: violate ? paid + 10 : paid - 5,
          reason: violate && next() < 0.5 ? "changed mind" : "damaged",
        },
        constraints: [refundConstraint],
        scope: { history: history({ get_order: { paid_amount: paid } }) },
        repairable: ["amount", "reason"],
        candidates: { amount: [paid] },
      };
    }
    case 3:
      return {
        tool: {
          name: "transfer",
          parameters: [
            { name: "from_account", type: "string" },
            { name: "to_account", type: "string" },
            { name: "amount", type: "number" },
            { name: "fee", type: "number" },
            { name: "currency", type: { enum: ["EUR", "USD", "GBP"] } },
          ],
          required: ["from_account", "to_account", "amount", "fee", "currency"],
        },
        arguments: {
          from_account: "FR76-1",
          to_account: violate ? "FR76-1" : "DE89-2",
          amount: violate ? 1500 : 400,
          fee: violate ? 1 : 4,
          currency: violate ? "GBP" : "EUR",
        },
        constraints: [transferConstraint],
        repairable: ["amount", "fee", "currency"],
      };
    case 4:
      return {
        tool: {
          name: "register_patient",
          parameters: [
            { name: "patient_id", type: "string" },
            { name: "insurance_status", type: { enum: ["verified", "pending", "denied"] } },
            { name: "copay", type: "number" },
          ],
          required: ["patient_id", "insurance_status", "copay"],
        },
        arguments: {
          patient_id: "P0012345",
          insurance_status: violate ? "verified" : "pending",
          copay: violate ? 75 : 20,
        },
        constraints: [intakeConstraint],
        scope: { history: history({ validateInsurance: { status: "pending" } }) },
        repairable: ["insurance_status", "copay"],
      };
    default:
      return {
        tool: {
          name: "book_hotel",
          parameters: [
            { name: "hotel", type: "string" },
            { name: "nights", type: "integer" },
            { name: "guests", type: "integer" },
          ],
          required: ["hotel", "nights", "guests"],
        },
        arguments: { hotel: "Ritz", nights: violate ? 12 : 3, guests: violate ? 6 : 2 },
        constraints: [stayConstraint],
        scope: { task: { request_stay: { max_nights: 7 } } },
        repairable: ["nights", "guests"],
      };
  }
}

const emailConstraint = parseExpression(
  "a.to.endsWith('@corp.example') && a.subject.startsWith('[ticket]') && !a.body.contains('password')",
);
const noteConstraint = parseExpression("a.note.contains(task.request_refund.order_id) && len(a.note) <= 60");
const pathConstraint = parseExpression("a.path.startsWith('/home/user/') && !a.path.contains('..')");

/** One string-heavy request (contains, prefix, suffix); about two in three violate. */
export function stringRequest(next: () => number): RepairRequest {
  const kind = Math.floor(next() * 3);
  const violate = next() < 0.67;
  switch (kind) {
    case 0:
      return {
        tool: {
          name: "send_email",
          parameters: [
            { name: "to", type: "string" },
            { name: "subject", type: "string" },
            { name: "body", type: "string" },
          ],
          required: ["to", "subject", "body"],
        },
        arguments: {
          to: violate ? "bob@gmail.com" : "bob@corp.example",
          subject: violate ? "Re: access" : "[ticket] access",
          body: "Please reset my access.",
        },
        constraints: [emailConstraint],
        repairable: ["to", "subject"],
        candidates: { to: ["bob@corp.example"] },
      };
    case 1:
      return {
        tool: {
          name: "add_note",
          parameters: [{ name: "note", type: "string" }],
          required: ["note"],
        },
        arguments: { note: violate ? "customer called again" : "refund for A-1234 approved" },
        constraints: [noteConstraint],
        scope: { task: { request_refund: { order_id: "A-1234" } } },
        repairable: ["note"],
      };
    default:
      return {
        tool: {
          name: "read_file",
          parameters: [{ name: "path", type: "string" }],
          required: ["path"],
        },
        arguments: { path: violate ? "/etc/passwd" : "/home/user/notes.txt" },
        constraints: [pathConstraint],
        repairable: ["path"],
        candidates: { path: ["/home/user/"] },
      };
  }
}
