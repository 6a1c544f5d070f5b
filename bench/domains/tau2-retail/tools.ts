import type { Database, Row } from "../tau2-shared/database.js";
import type { Action, Arguments, ToolHandler } from "../tau2-shared/domain.js";
import { calculate, requireRecord, roundCents, ToolError } from "../tau2-shared/tools.js";

// The retail tools of tau2, written from their schemas and docstrings (tool_schemas.json,
// `retail/tools.py`) and the manual. Tables: `users`, `orders`, `products` (by id).

interface Item {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
}
interface Variant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}
interface PaymentMethod {
  source: string;
  id: string;
  balance?: number;
}
interface Payment {
  transaction_type: "payment" | "refund";
  amount: number;
  payment_method_id: string;
}

const CANCEL_REASONS = ["no longer needed", "ordered by mistake"];

const order = (database: Database, id: string): Row => requireRecord(database, "orders", id, "order");
const user = (database: Database, id: string): Row => requireRecord(database, "users", id, "user");
const product = (database: Database, id: string): Row => requireRecord(database, "products", id, "product");

function requireStatus(found: Row, status: string, action: string): void {
  if (found.status !== status) {
    throw new ToolError(
      `order ${found.order_id} is ${found.status}; only a ${status} order can be ${action}`,
    );
  }
}

function paymentMethod(database: Database, userId: string, id: string): PaymentMethod {
  const method = (user(database, userId).payment_methods as Record<string, PaymentMethod>)[id];
  if (!method) throw new ToolError(`payment method ${id} not found for user ${userId}`);
  return method;
}

function requireBalance(method: PaymentMethod, amount: number): void {
  if (method.source === "gift_card" && (method.balance ?? 0) < amount) {
    throw new ToolError(
      `insufficient gift card balance: ${method.id} has ${method.balance}, needs ${roundCents(amount)}`,
    );
  }
}

/** Adds to (or, negative, takes from) a gift card's balance. */
function changeGiftCard(database: Database, userId: string, methodId: string, amount: number): void {
  const method = (database.edit("users", userId).payment_methods as Record<string, PaymentMethod>)[methodId];
  if (method?.source === "gift_card") method.balance = roundCents((method.balance ?? 0) + amount);
}

/**
 * The order's items to change, matched to the ids (duplicates count) by position in the order,
 * each with its new variant (same product, available), and the price difference new − old.
 */
function itemChange(
  database: Database,
  found: Row,
  itemIds: string[],
  newItemIds: string[],
): { changes: { position: number; variant: Variant }[]; difference: number } {
  if (itemIds.length === 0) throw new ToolError("no items given");
  if (itemIds.length !== newItemIds.length) {
    throw new ToolError("item_ids and new_item_ids must have the same length");
  }
  const items = found.items as Item[];
  const changes: { position: number; variant: Variant }[] = [];
  let difference = 0;
  itemIds.forEach((itemId, index) => {
    const position = items.findIndex(
      (item, at) => item.item_id === itemId && !changes.some((change) => change.position === at),
    );
    if (position < 0) throw new ToolError(`item ${itemId} not found in order ${found.order_id}`);
    const item = items[position] as Item;
    const newId = newItemIds[index] as string;
    const variant = (product(database, item.product_id).variants as Record<string, Variant>)[newId];
    if (!variant) {
      throw new ToolError(`new item ${newId} not found or not a variant of product ${item.product_id}`);
    }
    if (!variant.available) throw new ToolError(`new item ${newId} is not available`);
    changes.push({ position, variant });
    difference += variant.price - item.price;
  });
  return { changes, difference: roundCents(difference) };
}

function address(args: Arguments): Row {
  const { address1, address2, city, state, country, zip } = args;
  return { address1, address2, city, state, country, zip };
}

export const retailTools: Record<string, ToolHandler> = {
  calculate: (_database, { expression }) => calculate(expression),

  cancel_pending_order: (database, { order_id, reason }) => {
    requireStatus(order(database, order_id), "pending", "cancelled");
    if (!CANCEL_REASONS.includes(reason)) {
      throw new ToolError(
        `invalid reason ${JSON.stringify(reason)}: must be one of ${CANCEL_REASONS.join(", ")}`,
      );
    }
    const edited = database.edit("orders", order_id);
    const payments = edited.payment_history as Payment[];
    for (const payment of payments.filter((entry) => entry.transaction_type === "payment")) {
      payments.push({ ...payment, transaction_type: "refund" });
      changeGiftCard(database, edited.user_id as string, payment.payment_method_id, payment.amount);
    }
    edited.status = "cancelled";
    edited.cancel_reason = reason;
    return edited;
  },

  exchange_delivered_order_items: (database, { order_id, item_ids, new_item_ids, payment_method_id }) => {
    const found = order(database, order_id);
    requireStatus(found, "delivered", "exchanged");
    const { difference } = itemChange(database, found, item_ids, new_item_ids);
    requireBalance(paymentMethod(database, found.user_id as string, payment_method_id), difference);
    const edited = database.edit("orders", order_id);
    edited.status = "exchange requested";
    edited.exchange_items = [...item_ids].sort();
    edited.exchange_new_items = [...new_item_ids].sort();
    edited.exchange_payment_method_id = payment_method_id;
    edited.exchange_price_difference = difference;
    return edited;
  },

  find_user_id_by_name_zip: (database, { first_name, last_name, zip }) => {
    for (const row of database.rows("users")) {
      const name = row.name as { first_name: string; last_name: string };
      if (
        name.first_name.toLowerCase() === first_name.toLowerCase() &&
        name.last_name.toLowerCase() === last_name.toLowerCase() &&
        (row.address as { zip: string }).zip === zip
      ) {
        return row.user_id;
      }
    }
    throw new ToolError("user not found");
  },

  find_user_id_by_email: (database, { email }) => {
    for (const row of database.rows("users")) {
      if ((row.email as string).toLowerCase() === email.toLowerCase()) return row.user_id;
    }
    throw new ToolError("user not found");
  },

  get_order_details: (database, { order_id }) => order(database, order_id),

  get_product_details: (database, { product_id }) => product(database, product_id),

  get_item_details: (database, { item_id }) => {
    for (const row of database.rows("products")) {
      const variant = (row.variants as Record<string, Variant>)[item_id];
      if (variant) return { ...variant, product_id: row.product_id, name: row.name };
    }
    throw new ToolError(`item ${item_id} not found`);
  },

  get_user_details: (database, { user_id }) => user(database, user_id),

  list_all_product_types: (database) => {
    const products = [...database.rows("products")].map((row) => [row.name as string, row.product_id]);
    return Object.fromEntries(products.sort(([a], [b]) => (a as string).localeCompare(b as string)));
  },

  modify_pending_order_address: (database, args) => {
    requireStatus(order(database, args.order_id), "pending", "modified");
    const edited = database.edit("orders", args.order_id);
    edited.address = address(args);
    return edited;
  },

  modify_pending_order_items: (database, { order_id, item_ids, new_item_ids, payment_method_id }) => {
    const found = order(database, order_id);
    requireStatus(found, "pending", "modified");
    const { changes, difference } = itemChange(database, found, item_ids, new_item_ids);
    const userId = found.user_id as string;
    requireBalance(paymentMethod(database, userId, payment_method_id), difference);
    const edited = database.edit("orders", order_id);
    const items = edited.items as Item[];
    for (const { position, variant } of changes) {
      const item = items[position] as Item;
      items[position] = {
        ...item,
        item_id: variant.item_id,
        price: variant.price,
        options: { ...variant.options },
      };
    }
    if (difference !== 0) {
      (edited.payment_history as Payment[]).push({
        transaction_type: difference > 0 ? "payment" : "refund",
        amount: Math.abs(difference),
        payment_method_id,
      });
      changeGiftCard(database, userId, payment_method_id, -difference);
    }
    edited.status = "pending (item modified)";
    return edited;
  },

  modify_pending_order_payment: (database, { order_id, payment_method_id }) => {
    const found = order(database, order_id);
    requireStatus(found, "pending", "modified");
    const payments = (found.payment_history as Payment[]).filter(
      (entry) => entry.transaction_type === "payment",
    );
    if (payments.length !== 1)
      throw new ToolError(`order ${order_id} has ${payments.length} payments, expected one`);
    const original = payments[0] as Payment;
    if (original.payment_method_id === payment_method_id) {
      throw new ToolError("the new payment method must differ from the original one");
    }
    const userId = found.user_id as string;
    requireBalance(paymentMethod(database, userId, payment_method_id), original.amount);
    const edited = database.edit("orders", order_id);
    (edited.payment_history as Payment[]).push(
      { transaction_type: "payment", amount: original.amount, payment_method_id },
      { transaction_type: "refund", amount: original.amount, payment_method_id: original.payment_method_id },
    );
    changeGiftCard(database, userId, payment_method_id, -original.amount);
    changeGiftCard(database, userId, original.payment_method_id, original.amount);
    return edited;
  },

  modify_user_address: (database, args) => {
    user(database, args.user_id);
    const edited = database.edit("users", args.user_id);
    edited.address = address(args);
    return edited;
  },

  return_delivered_order_items: (database, { order_id, item_ids, payment_method_id }) => {
    const found = order(database, order_id);
    requireStatus(found, "delivered", "returned");
    const method = paymentMethod(database, found.user_id as string, payment_method_id);
    const original = (found.payment_history as Payment[]).some(
      (entry) => entry.transaction_type === "payment" && entry.payment_method_id === payment_method_id,
    );
    if (!original && method.source !== "gift_card") {
      throw new ToolError("the refund must go to the original payment method or an existing gift card");
    }
    if (item_ids.length === 0) throw new ToolError("no items given");
    const remaining = (found.items as Item[]).map((item) => item.item_id);
    for (const itemId of item_ids as string[]) {
      const position = remaining.indexOf(itemId);
      if (position < 0) throw new ToolError(`item ${itemId} not found in order ${order_id}`);
      remaining.splice(position, 1);
    }
    const edited = database.edit("orders", order_id);
    edited.status = "return requested";
    edited.return_items = [...item_ids].sort();
    edited.return_payment_method_id = payment_method_id;
    return edited;
  },

  transfer_to_human_agents: () => "Transfer successful",
};

/** The users a reference acts for: named by `user_id`, or owning an `order_id` it names. */
function usersOf(database: Database, reference: readonly Action[]): Set<string> {
  const users = new Set<string>();
  for (const { arguments: args } of reference) {
    if (typeof args.user_id === "string" && database.get("users", args.user_id)) users.add(args.user_id);
    const owner =
      typeof args.order_id === "string" ? database.get("orders", args.order_id)?.user_id : undefined;
    if (typeof owner === "string") users.add(owner);
  }
  return users;
}

/** Retail's account rule (see `withSolvability`): authentication by email, or by name and zip. */
export function retailAccount(
  database: Database,
  reference: readonly Action[],
  opening: string,
): { problem?: string; texts: string[] } {
  const texts: string[] = [];
  for (const userId of usersOf(database, reference)) {
    const profile = user(database, userId);
    const name = profile.name as { first_name: string; last_name: string };
    const zip = (profile.address as { zip: string }).zip;
    const byEmail = opening.includes((profile.email as string).toLowerCase());
    const byName = [name.first_name, name.last_name, zip].every((part) =>
      opening.includes(part.toLowerCase()),
    );
    if (!byEmail && !byName) {
      return {
        problem: `the instructions give neither the email nor the name and zip of user ${userId}`,
        texts,
      };
    }
    texts.push(JSON.stringify(profile));
    for (const orderId of profile.orders as string[]) {
      const found = order(database, orderId);
      texts.push(JSON.stringify(found));
      for (const item of found.items as Item[])
        texts.push(JSON.stringify(product(database, item.product_id)));
    }
  }
  return { texts };
}

export function retailCatalogue(database: Database): string {
  return JSON.stringify([...database.rows("products")]);
}
